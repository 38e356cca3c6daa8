/**
 * tools/docs/check-links.ts: relative links of the Markdown docs name files and headings that exist
 * (CI runs it as `npm run docs:links`; the last case here runs it over the repository too).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { anchorsOf, checkLinks, docFiles, linksOf, slug } from '../../tools/docs/check-links.ts';
import { ROOT } from '../support/paths.ts';

const tree = mkdtempSync(join(tmpdir(), 'agentd-links-'));
afterAll(() => rmSync(tree, { recursive: true, force: true }));
const write = (files: Record<string, string>) => {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), text);
  }
};

describe('slug', () => {
  it('makes GitHub heading anchors', () => {
    expect(slug('Probes: `GET /api/health/live` and `GET /api/health/ready`')).toBe(
      'probes-get-apihealthlive-and-get-apihealthready',
    );
    expect(slug('Elicitation: a tool server asks the user')).toBe('elicitation-a-tool-server-asks-the-user');
    expect(slug('`server.limits.rest`')).toBe('serverlimitsrest');
    expect(slug('`mcpServers.<name>` (type: stdio)')).toBe('mcpserversname-type-stdio');
    expect(slug('Export, import, fork')).toBe('export-import-fork');
    expect(slug('snake_case and _emphasis_')).toBe('snake_case-and-emphasis');
    expect(slug('[A link](x.md) in a heading')).toBe('a-link-in-a-heading');
    expect(slug('Café – naïve')).toBe('café--naïve');
  });

  it('numbers repeated headings and reads HTML ids; headings in code blocks are not headings', () => {
    const anchors = anchorsOf('# Top\n## Usage\n## Usage\n```sh\n# not a heading\n```\n<a id="custom"></a>\n');
    expect([...anchors].sort()).toEqual(['custom', 'top', 'usage', 'usage-1']);
  });
});

describe('linksOf', () => {
  it('finds inline links, images and reference definitions, not code', () => {
    const md = [
      'See [a](a.md), ![img](pic.png "title") and [b](<b c.md>).',
      '`[not](a-link.md)` and',
      '```md',
      '[nor](this.md)',
      '```',
      '[ref]: ref.md#part',
    ].join('\n');
    expect(linksOf(md)).toEqual([
      { target: 'a.md', line: 1 },
      { target: 'pic.png', line: 1 },
      { target: 'b c.md', line: 1 },
      { target: 'ref.md#part', line: 6 },
    ]);
  });
});

describe('checkLinks', () => {
  write({
    'README.md':
      '# Project\n## Install\nSee [the guide](docs/guide.md#first-steps), [install](#install) and [code](src/).\n',
    'docs/guide.md':
      '# Guide\n## First steps\nBack to the [README](../README.md#project); [the tool](../src/tool.ts).\n',
    'src/tool.ts': 'export {};\n',
    'docs/broken.md': [
      '# Broken',
      'A [missing file](gone.md).',
      'A [missing anchor](guide.md#second-steps).',
      'A [missing local anchor](#nowhere).',
      'An [anchor into code](../src/tool.ts#L1).',
      'A [way out](../../outside.md).',
      'A [web page](https://example.com/).',
      '',
    ].join('\n'),
  });

  it('passes links to files, folders and headings that exist', () => {
    expect(checkLinks(tree, ['README.md', 'docs/guide.md'])).toEqual([]);
  });

  it('reports a link to a missing file or anchor, with its line', () => {
    const problems = checkLinks(tree, ['docs/broken.md']);
    expect(problems.map(({ line, link }) => ({ line, link }))).toEqual([
      { line: 2, link: 'gone.md' },
      { line: 3, link: 'guide.md#second-steps' },
      { line: 4, link: '#nowhere' },
      { line: 5, link: '../src/tool.ts#L1' },
      { line: 6, link: '../../outside.md' },
      { line: 7, link: 'https://example.com/' },
    ]);
    expect(problems[0]!.reason).toMatch(/names no file/);
    expect(problems[1]!.reason).toBe('names no heading #second-steps in docs/guide.md');
    expect(problems[2]!.reason).toBe('names no heading #nowhere in docs/broken.md');
  });
});

describe('the repository', () => {
  it('checks the README, every docs page, SECURITY.md and the benchmark and example READMEs', () => {
    const files = docFiles(ROOT);
    expect(files).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/README.md',
        'docs/configuration.md',
        'docs/api.md',
        'SECURITY.md',
        'bench/README.md',
        'examples/ag-ui-copilotkit/README.md',
      ]),
    );
  });

  it('has no broken link', () => {
    expect(checkLinks(ROOT, docFiles(ROOT))).toEqual([]);
  });
});
