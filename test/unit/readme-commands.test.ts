/**
 * What CI runs of README.md (tools/ci/readme-commands.ts, run by tools/ci/readme-lines.ts in .ci/run): every line of
 * the Install and Set up sections' shell blocks, with its line in the file, read from the README itself; a README
 * without those sections or their commands fails instead of running nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readmeCommands } from '../../tools/ci/readme-commands.ts';
import { ROOT } from '../support/paths.ts';

const fence = '```';

describe("README.md's Install and Set up commands", () => {
  it('are read from the README with their line numbers: the install, the pack, the demo, init and serve', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const commands = readmeCommands(readme);
    const lines = readme.split('\n');
    for (const c of commands) expect(lines[c.line - 1]).toBe(c.command);
    const words = commands.map((c) => c.command.replace(/\s+#.*$/, ''));
    expect(words).toEqual(
      expect.arrayContaining([
        'npm ci',
        'npm run pack:install',
        'agentd demo',
        'agentd init',
        'OPENAI_API_KEY=sk-... agentd',
      ]),
    );
    expect(words[0]).toMatch(/^git clone <this repository> /);
    expect(new Set(commands.map((c) => c.section.split(' ')[0]))).toEqual(new Set(['Install', 'Set']));
  });

  it('takes shell blocks only, skips comments and blank lines, joins continued lines', () => {
    const markdown = [
      '# Tool',
      '## Install', // 2
      `${fence}sh`,
      '# a comment',
      'npm ci   # installs', // 5
      '',
      `${fence}`,
      `${fence}yaml`,
      'llm: {}',
      `${fence}`,
      '## Set up and run', // 11
      `${fence}bash`,
      'curl -s http://127.0.0.1:3001/api/health \\', // 13
      "  -H 'Accept: application/json'",
      `${fence}`,
      '## Other',
      `${fence}sh`,
      'rm -rf /',
      `${fence}`,
    ].join('\n');
    expect(readmeCommands(markdown)).toEqual([
      { section: 'Install', line: 5, command: 'npm ci   # installs' },
      {
        section: 'Set up and run',
        line: 13,
        command: "curl -s http://127.0.0.1:3001/api/health \\\n  -H 'Accept: application/json'",
      },
    ]);
  });

  it('fails on a README without one of the sections, or with a section that has no command', () => {
    const install = `## Install\n${fence}sh\nnpm ci\n${fence}\n`;
    expect(() => readmeCommands(install)).toThrow('README.md has no section "## Set up…"');
    expect(() => readmeCommands(`${install}## Set up\nagentd init (not in a block)\n`)).toThrow(
      `README.md's section "## Set up…" has no command in a shell block`,
    );
  });
});
