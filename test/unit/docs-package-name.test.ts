/**
 * Every command in the README and the docs that installs, runs or packs agentd names the npm package of
 * package.json (the npm name `agentd` belongs to someone else), and every image tag the docs build or deploy is that
 * name too (as compose.yaml and tools/ci/image.sh tag it).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docFiles } from '../../tools/docs/check-links.ts';
import { ROOT } from '../support/paths.ts';

const NAME = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string }).name;
const TOKEN = String.raw`([^\s\`'"()|;]+)`;
const FLAGS = String.raw`(?:-{1,2}[\w-]+\s+)*`;
const VERSION = String.raw`(?:\d+\.\d+\.\d+[\w.-]*|<version>)`;
const PATTERNS: { what: string; re: RegExp }[] = [
  {
    what: 'global install',
    re: new RegExp(String.raw`\bnpm\s+(?:install|i)\s+${FLAGS}(?:-g|--global)\s+${FLAGS}${TOKEN}`, 'g'),
  },
  { what: 'npx', re: new RegExp(String.raw`\bnpx\s+${FLAGS}${TOKEN}`, 'g') },
  { what: 'tarball', re: new RegExp(String.raw`([\w@./-]+?)-${VERSION}\.tgz`, 'g') },
  { what: 'image', re: new RegExp(String.raw`(?:\bdocker\s+build\s+(?:.*\s)?-t\s+|^\s*image:\s+)${TOKEN}`, 'gm') },
];

/** Each command of `text` that names agentd otherwise than `name`, as "<what>: <the command>". */
function wrongNames(text: string, name: string): string[] {
  return PATTERNS.flatMap(({ what, re }) =>
    [...text.matchAll(re)].filter((m) => namesOther(what, m[1]!, name)).map((m) => `${what}: ${m[0].trim()}`),
  );
}

function namesOther(what: string, target: string, name: string): boolean {
  if (what === 'tarball') return posix.basename(target) !== name;
  const local = /^(?:\.{0,2}\/|~)/.test(target) || target.endsWith('.tgz');
  if (local) return false; // a path: its tarball's name is checked as a tarball
  const unwrapped = target.replace(/^\$\{\w+:-(.*)\}$/, '$1'); // compose's ${AGENTD_IMAGE:-default}
  const bare = unwrapped.replace(/(?<=.)@.*$/, '').replace(/:.*$/, '');
  // npx runs other tools (vitest, tsx, server-everything) and compose other images (redis): only what is named
  // like agentd must be agentd's name.
  if (what !== 'global install' && !bare.startsWith('agentd')) return false;
  return bare !== name;
}

const OLD_README = [
  'npm install -g agentd            # or: npm install -g ./agentd-0.1.0.tgz (a packed tarball)',
  '`npx agentd demo` works without installing.',
  'docker build -t agentd:0.1.0 .',
  '          image: agentd:0.1.0',
].join('\n');

describe('the package name in the docs', () => {
  it('finds the old commands that name the npm package `agentd`', () => {
    expect(wrongNames(OLD_README, 'agentd-server')).toEqual([
      'global install: npm install -g agentd',
      'npx: npx agentd',
      'tarball: ./agentd-0.1.0.tgz',
      'image: docker build -t agentd:0.1.0',
      'image: image: agentd:0.1.0',
    ]);
  });

  it('accepts the package name, its versions and tarballs, local paths, and other tools run with npx', () => {
    const text = [
      '    image: ${AGENTD_IMAGE:-agentd-server:local}',
      '    image: ${AGENTD_REDIS_IMAGE:-redis:7-alpine}',
      'npm install -g agentd-server@0.1.0 && npm i --global ./dist/agentd-server-0.1.0.tgz',
      'npx agentd-server demo; npx -y agentd-server@latest init; npx ./agentd-server-0.1.0.tgz demo',
      'npx vitest run; npx -y @modelcontextprotocol/server-everything; `agentd-server-<version>.tgz`',
      'docker build --build-arg X=y -t agentd-server:0.1.0 .',
    ].join('\n');
    expect(wrongNames(text, 'agentd-server')).toEqual([]);
  });

  const kubernetes = readdirSync(join(ROOT, 'docs/kubernetes')).map((file) => `docs/kubernetes/${file}`);
  const files = [...docFiles(ROOT), ...kubernetes, 'compose.yaml', 'Dockerfile'];

  it(`names the package ${NAME} in every command of the README, docs/, SECURITY.md and the image files`, () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'README.md',
        'SECURITY.md',
        'docs/getting-started.md',
        'docs/kubernetes/deployment.yaml',
      ]),
    );
    const wrong = files.flatMap((file) =>
      wrongNames(readFileSync(join(ROOT, file), 'utf8'), NAME).map((w) => `${file}: ${w}`),
    );
    expect(wrong).toEqual([]);
  });
});
