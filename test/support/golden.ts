/**
 * Golden files: a committed JSON file under test/golden/ pins a table the wire depends on.
 * `expectGolden(name, value)` fails with a diff when the value differs; run the tests with
 * `UPDATE_GOLDEN=1` to rewrite the file after a deliberate change (and review the diff).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';

const GOLDEN_DIR = join(import.meta.dirname, '..', 'golden');

export function expectGolden(name: string, value: unknown): void {
  const file = join(GOLDEN_DIR, `${name}.json`);
  const text = `${JSON.stringify(value, null, 2)}\n`;
  if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) {
    if (process.env.CI === 'true') throw new Error(`golden file ${file} is missing or being rewritten on CI`);
    writeFileSync(file, text);
    return;
  }
  expect(JSON.parse(text), `${name} differs from test/golden/${name}.json (UPDATE_GOLDEN=1 rewrites it)`).toEqual(
    JSON.parse(readFileSync(file, 'utf8')),
  );
}

/**
 * The Markdown tables of the section under `heading` (up to the next heading of the same level),
 * each as its header cells and body rows of cells (trimmed, backticks removed).
 */
export function sectionTables(markdown: string, heading: string): { header: string[]; rows: string[][] }[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`no heading "${heading}"`);
  const level = heading.split(' ')[0] ?? '##';
  const lines = markdown.slice(start + heading.length + 2).split('\n');
  const end = lines.findIndex((l) => l.startsWith(`${level} `));
  const cells = (line: string) =>
    line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim().replaceAll('`', ''));
  const tables: { header: string[]; rows: string[][] }[] = [];
  let current: { header: string[]; rows: string[][] } | undefined;
  for (const line of end === -1 ? lines : lines.slice(0, end)) {
    if (!line.startsWith('|')) {
      current = undefined;
    } else if (!current) {
      current = { header: cells(line), rows: [] };
      tables.push(current);
    } else if (!/^\|[\s:|-]+\|$/.test(line)) {
      current.rows.push(cells(line));
    }
  }
  return tables;
}

/** A Markdown file of the repository, by its path (`docs/api.md`). */
export const readDoc = (path: string): string => readFileSync(join(import.meta.dirname, '..', '..', path), 'utf8');

export const README = readDoc('README.md');
/** The API reference: its tables of routes, client frames, events and errors are checked against the code. */
export const API_DOC = readDoc('docs/api.md');
