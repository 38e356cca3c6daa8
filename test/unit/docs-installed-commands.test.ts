/**
 * The docs an installed user reads (README.md, docs/*.md: the package ships them) give shell lines that work from the
 * package (`agentd …`), or say they need a checkout of agentd (issue 69). A line of a shell block that runs a
 * checkout's script (`npm start`, `npm run …`, `npm test`, `npm ci`, `npx tsx`, `node --import tsx`) is marked
 * checkout-only, as docs/development.md#checkout-only-commands-in-the-docs says:
 * - its own comment says `checkout` (`npm run bench   # in a checkout`), or
 * - the block's first line is a comment that says `checkout` (`# in a checkout:`), which covers the block.
 * docs/development.md, the contributors' page, is all about a checkout.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/paths.ts';

/** A checkout's commands: scripts of its package.json and its TypeScript sources. */
const CHECKOUT_COMMAND = /(^|[\s;&|(])(npm (start|run|test|ci)\b|npx tsx\b|node --import tsx\b)/;
const FENCE = /^\s*```\s*(\S*)/;
const SHELL = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);
const saysCheckout = (comment: string | undefined) => comment !== undefined && /checkout/i.test(comment);
const commentOf = (line: string): string | undefined => /(?:^|\s)#(.*)$/.exec(line)?.[1];

/** The shell lines of `markdown` that run a checkout's command without saying so: `line number: text`. */
export function unmarkedCheckoutLines(markdown: string): string[] {
  const found: string[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const fence = FENCE.exec(lines[i]!);
    if (!fence) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !FENCE.test(lines[end]!)) end++;
    i = end; // the closing fence
    if (!SHELL.has(fence[1]!)) continue;
    const first = lines[start]?.trim() ?? '';
    const blockMarked = first.startsWith('#') && saysCheckout(first.slice(1));
    for (let j = start; j < end && !blockMarked; j++) {
      const line = lines[j]!;
      const code = line.replace(/(?:^|\s)#.*$/, '');
      if (CHECKOUT_COMMAND.test(code) && !saysCheckout(commentOf(line))) found.push(`${j + 1}: ${line.trim()}`);
    }
  }
  return found;
}

const INSTALLED_DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md') && f !== 'development.md')
    .map((f) => `docs/${f}`),
];

describe('shell lines of the docs an installed user reads', () => {
  it.each(INSTALLED_DOCS)('%s runs no checkout-only command without saying so', (file) => {
    expect(unmarkedCheckoutLines(readFileSync(join(ROOT, file), 'utf8'))).toEqual([]);
  });

  it('flags npm start and npm run lines, unless the line or its block says it needs a checkout', () => {
    const doc = [
      'Text `npm start` in prose is not a shell line.',
      '```sh',
      'agentd --inspect',
      'npm start -- --inspect',
      'OPENAI_API_KEY=sk-x npm run dev',
      'npm run bench   # in a checkout',
      'curl http://127.0.0.1:3001/   # npm run in a comment is no command',
      '```',
      '```sh',
      '# in a checkout of agentd:',
      'npm ci && npm test',
      '```',
      '```json',
      '{ "command": "npm run x" }',
      '```',
      '```',
      'npm run in a block of no language: output, not a command',
      '```',
      '```bash',
      'npm test',
      '```',
    ].join('\n');
    expect(unmarkedCheckoutLines(doc)).toEqual([
      '4: npm start -- --inspect',
      '5: OPENAI_API_KEY=sk-x npm run dev',
      '20: npm test',
    ]);
  });
});
