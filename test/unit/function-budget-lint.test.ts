/**
 * `npm run lint` holds functions of src/ and machines/ to 100 lines of code, with exemptions by function that
 * only shrink (tools/eslint/function-budget.js, its list tools/eslint/function-budget.json). The rule is run
 * with ESLint's RuleTester on fixtures, and its count is checked against ESLint's own `max-lines-per-function`
 * on every function of the repository.
 */
import { ESLint, type Linter, RuleTester } from 'eslint';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tseslint from 'typescript-eslint';
import { afterAll, describe, expect, it } from 'vitest';
import functionBudget, { readExemptions } from '../../tools/eslint/function-budget.js';
import agentd from '../../tools/eslint/plugin.js';
import config from '../../eslint.config.js';

RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

const repoRoot = join(import.meta.dirname, '..', '..');
const root = mkdtempSync(join(tmpdir(), 'agentd-budget-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
writeFileSync(
  join(root, 'budget.json'),
  JSON.stringify([
    { file: 'src/big.ts', function: 'createBig', lines: 6 },
    { file: 'src/big.ts', function: 'handler', lines: 5 },
    { file: 'src/gone.ts', function: 'removed', lines: 9 },
  ]),
);
const options = [{ root, max: 4, exemptions: 'budget.json' }];
/** A message's data: the list and budget of these fixtures, and what a case says. */
const data = (said: Record<string, string>): Record<string, string> => ({ list: 'budget.json', max: '4', ...said });
const file = (path: string): string => join(root, path);

/** A function of `body` lines of code (each `step();`), with a blank line and comments that do not count. */
const fn = (head: string, body: number, tail = '}'): string =>
  [head, '  // a comment line', '', '  /* a block', '     comment */', ...Array(body).fill('  step();'), tail].join(
    '\n',
  );

/** The exempted arrow `handler` of src/big.ts, with `body` lines of code inside its braces. */
const handler = (body: number): string =>
  ['const handler = () => {', ...Array(body).fill('  step();'), '};'].join('\n');

const ruleTester = new RuleTester({ languageOptions: { parser: tseslint.parser } });

ruleTester.run('agentd/function-budget', functionBudget, {
  valid: [
    // Head and tail count: 2 + 2 body lines = 4, the budget; blank and comment lines do not count.
    { code: fn('function small() {', 2), filename: file('src/small.ts'), options },
    // Exempted functions between the budget and their recorded lines (they may shrink without an edit).
    { code: `${fn('export function createBig() {', 4)}\n${handler(3)}`, filename: file('src/big.ts'), options },
    { code: `${fn('export function createBig() {', 3)}\n${handler(3)}`, filename: file('src/big.ts'), options },
    // An IIFE is not counted (as max-lines-per-function's default).
    { code: `(${fn('function () {', 9)})();`, filename: file('src/iife.ts'), options },
  ],
  invalid: [
    {
      // A line holding code and a comment counts: only a line a comment covers whole is skipped.
      code: 'function f() { /* a */\n  a(); // b\n  /* c */ b();\n  c(); /* d\n  e */\n}',
      filename: file('src/x.ts'),
      options,
      errors: [{ messageId: 'tooLong', data: data({ name: 'f', lines: '5' }) }],
    },
    {
      code: fn('function tooBig() {', 3),
      filename: file('src/small.ts'),
      options,
      errors: [{ messageId: 'tooLong', data: data({ name: 'tooBig', lines: '5', max: '4' }), line: 1 }],
    },
    {
      // Names: the variable an arrow or function expression is assigned to, a method's key, else <anonymous>@line.
      code: [
        fn('const arrow = () => {', 3, '};'),
        fn('let expr = function () {', 3, '};'),
        fn('const o = { method() {', 3, '} };'),
        fn('class C { run() {', 3, '} }'),
        fn('exports.assigned = () => {', 3, '};'),
        fn('call(() => {', 3, '});'),
      ].join('\n'),
      filename: file('src/names.ts'),
      options,
      errors: [
        { messageId: 'tooLong', data: data({ name: 'arrow', lines: '5' }) },
        { messageId: 'tooLong', data: data({ name: 'expr', lines: '5' }) },
        { messageId: 'tooLong', data: data({ name: 'method', lines: '5' }) },
        { messageId: 'tooLong', data: data({ name: 'run', lines: '5' }) },
        { messageId: 'tooLong', data: data({ name: 'assigned', lines: '5' }) },
        { messageId: 'tooLong', data: data({ name: '<anonymous>@46', lines: '5' }), line: 46 },
      ],
    },
    {
      // An exemption names a function of its file, not the file: another long function there is still refused.
      code: `${fn('export function createBig() {', 3)}\n${fn('function other() {', 3)}\n${handler(3)}`,
      filename: file('src/big.ts'),
      options,
      errors: [{ messageId: 'tooLong', data: data({ name: 'other', lines: '5' }), line: 10 }],
    },
    {
      // An exempted function that grew past its recorded lines, and one that fits the budget now.
      code: `${fn('export function createBig() {', 5)}\n${handler(1)}`,
      filename: file('src/big.ts'),
      options,
      errors: [
        { messageId: 'grew', data: data({ name: 'createBig', lines: '7', recorded: '6' }), line: 1 },
        { messageId: 'fits', data: data({ name: 'handler', lines: '3' }), line: 12 },
      ],
    },
    {
      // An exemption whose function is gone (renamed or removed).
      code: 'export const kept = 1;',
      filename: file('src/gone.ts'),
      options,
      errors: [{ messageId: 'stale', data: data({ name: 'removed', file: 'src/gone.ts' }) }],
    },
  ],
});

/** Every .ts file under src/ and machines/ of the repository, absolute. */
function sourceFiles(): string[] {
  return ['src', 'machines'].flatMap((dir) =>
    readdirSync(join(repoRoot, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(repoRoot, dir, f)),
  );
}

/** Every function's line count as `line:column count`, reported by a rule that reports them all (budget 0). */
async function counts(rules: Linter.RulesRecord, ruleId: string): Promise<string[]> {
  const eslint = new ESLint({
    cwd: repoRoot,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, plugins: { agentd }, rules }],
  });
  const results = await eslint.lintFiles(sourceFiles());
  return results.flatMap((r) =>
    r.messages
      .filter((m) => m.ruleId === ruleId)
      .map((m) => `${r.filePath}:${m.line}:${m.column} ${/has (?:too many lines \()?(\d+)/.exec(m.message)?.[1]}`),
  );
}

/** The options eslint.config.js gives `agentd/function-budget`. */
function budget(): { max: number; exemptions: string } {
  const entries = (config as Linter.Config[]).filter((c) => c.rules?.['agentd/function-budget']);
  expect(entries).toHaveLength(1);
  const rule = entries[0]?.rules?.['agentd/function-budget'];
  return (rule as [string, { max: number; exemptions: string }])[1];
}

describe('the function budget of the repository', () => {
  it('counts every function of src/ and machines/ as max-lines-per-function does (skipping blank and comment lines)', async () => {
    const empty = join(root, 'empty.json');
    writeFileSync(empty, '[]');
    const ours = await counts(
      { 'agentd/function-budget': ['error', { root: repoRoot, max: 0, exemptions: empty }] },
      'agentd/function-budget',
    );
    const eslints = await counts(
      { 'max-lines-per-function': ['error', { max: 0, skipBlankLines: true, skipComments: true }] },
      'max-lines-per-function',
    );
    expect(ours.length).toBeGreaterThan(1000);
    expect(ours).toEqual(eslints);
  }, 240_000); // two ESLint passes over every source file: about 25 s on an idle machine, far more on a busy one

  it('holds src/ and machines/ to 100 lines a function', () => {
    expect(budget().max).toBe(100);
  });

  it('lists exemptions of files that exist, each function once and over the budget when recorded', () => {
    const { max, exemptions } = budget();
    const list = readExemptions(join(repoRoot, exemptions));
    for (const e of list) {
      expect(existsSync(join(repoRoot, e.file)), e.file).toBe(true);
      expect(e.lines, `${e.file} ${e.function}`).toBeGreaterThan(max);
    }
    const keys = list.map((e) => `${e.file} ${e.function}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
