/**
 * The docs a newcomer reads link only inside the repository, to files and headings that exist
 * (no web page that may move, no sibling folder a clone does not have).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/paths.ts';

const docs = ['README.md', 'SECURITY.md', 'bench/README.md', 'tools/simulator/README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
const anchors = (markdown: string) =>
  new Set([...markdown.matchAll(/^#+ (.+)$/gm)].map((m) => m[1]!.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-')));

const links = (markdown: string) => [...markdown.replace(/```[\s\S]*?```/g, '').matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);

describe.each(docs)('%s', (doc) => {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  it('links only to files and headings in the repository', () => {
    for (const link of links(text)) {
      expect(link, `${doc} links outside the repository`).not.toMatch(/^[a-z]+:/i);
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path ? join(dirname(join(ROOT, doc)), path) : join(ROOT, doc);
      expect(relative(ROOT, target), `${doc}: ${link}`).not.toMatch(/^\.\./);
      expect(existsSync(target), `${doc}: ${link} does not exist`).toBe(true);
      if (anchor) expect(anchors(readFileSync(target, 'utf8')).has(anchor), `${doc}: ${link} names no heading`).toBe(true);
    }
  });
});
