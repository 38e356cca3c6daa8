/** Config errors a person can act on: file:line:col, the key's path, the near miss, the docs section. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { createKeyDocs } from '../../src/config/key-docs.ts';
import { editDistance, nearMiss } from '../../src/config/near-miss.ts';
import { parseCliArgs } from '../../src/cli/args.ts';

/** The problems of loading `text` as an agent file, each without the file's name in front. */
async function problemsOf(text: string): Promise<string[]> {
  const file = join(await mkdtemp(join(tmpdir(), 'agentd-config-errors-')), 'agent.yml');
  await writeFile(file, text);
  try {
    await loadConfig(file, {});
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems.map((p) => p.replace(`${file}:`, ''));
  }
  throw new Error('the config loaded');
}

describe('near misses', () => {
  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('modle', 'model')).toBe(1);
    expect(editDistance('opnai', 'openai')).toBe(1);
    expect(editDistance('abc', 'xyz')).toBe(3);
  });
  it('suggests the closest candidate, ignoring case, and nothing far off', () => {
    expect(nearMiss('mcpServer', ['llm', 'mcpServers', 'server'])).toBe('mcpServers');
    expect(nearMiss('SystemPrompt', ['systemPrompt', 'name'])).toBe('systemPrompt');
    expect(nearMiss('colour', ['model', 'provider'])).toBeUndefined();
  });
});

describe('the schema at a key path', () => {
  const { keysAt, docsLink } = createKeyDocs();
  it('knows the keys of objects, list items, map values and both kinds of tool server', () => {
    expect(keysAt([])).toContain('mcpServers');
    expect(keysAt(['llm', 'fallback', 0])).toContain('temperature');
    expect(keysAt(['mcpServers', 'fs'])).toEqual(expect.arrayContaining(['command', 'baseUrl']));
  });
  it("links the docs section that lists a key's object", () => {
    expect(docsLink([])).toBe('docs/configuration.md#top-level-keys');
    expect(docsLink(['server', 'limits', 'rest'])).toBe('docs/configuration.md#serverlimitsrest');
    expect(docsLink(['mcpServers', 'fs'])).toBe('docs/configuration.md#mcpserversname');
    expect(docsLink(['llm', 'fallback', 2])).toBe('docs/configuration.md#llmfallback');
  });
});

describe('agent file problems', () => {
  it('names an unknown key where it is written, with the key it probably meant and its docs', async () => {
    expect(await problemsOf('llm:\n  provider: openai\n  modle: gpt-4o\n')).toEqual([
      '3:3: llm.modle: unknown key "modle"; did you mean "model"? (see docs/configuration.md#llm)',
    ]);
    expect(await problemsOf('llm:\n  model: m\nmcpServer:\n  fs: { command: x }\n')).toEqual([
      '3:1: mcpServer: unknown key "mcpServer"; did you mean "mcpServers"? (see docs/configuration.md#top-level-keys)',
    ]);
  });
  it('names a value that is not one of the choices, with the one it probably meant', async () => {
    expect(await problemsOf('llm:\n  provider: opnai\n  model: m\n')).toEqual([
      expect.stringMatching(
        /^2:3: llm\.provider: "opnai" is not one of openai, .*; did you mean "openai"\? \(see docs\/configuration\.md#llm\)$/,
      ),
    ]);
    expect(await problemsOf('llm:\n  model: m\nmcpServers:\n  fs:\n    type: stdoi\n    command: x\n')).toEqual([
      '5:5: mcpServers.fs.type: "stdoi" is not one of stdio, http; did you mean "stdio"? (see docs/configuration.md#mcpserversname)',
    ]);
  });
  it('names a missing key at its object, and deeper mistakes at their line', async () => {
    expect(await problemsOf('llm:\n  provider: openai\nname: x\n')).toEqual([
      '1:1: llm.model: missing (string required) (see docs/configuration.md#llm)',
    ]);
    expect(await problemsOf('llm:\n  model: m\n  fallback:\n    - model: n\n      temprature: 1\n')).toEqual([
      '5:7: llm.fallback[0].temprature: unknown key "temprature"; did you mean "temperature"? (see docs/configuration.md#llmfallback)',
    ]);
  });
  it('reports a YAML mistake on its own line, in plain words', async () => {
    expect(await problemsOf('llm:\n  provider: openai\n   model: gpt-4o\n')).toEqual([
      '3:4: not valid YAML: this line is indented more than the key on line 2; indent it as much as that key, or give it a parent key ending in ":"',
    ]);
    expect(await problemsOf('llm:\n  provider: openai\n  model gpt-4o\n')).toEqual([
      '3:3: not valid YAML: "model gpt-4o" needs ":" after its key, as in key: value',
    ]);
    expect(await problemsOf('llm:\n  provider: "openai\n  model: m\n')).toEqual([
      '2:1: not valid YAML: this quoted value is never closed: end it with the same quote',
    ]);
    expect(await problemsOf('llm:\n\tmodel: m\n')).toEqual([
      '2:1: not valid YAML: YAML is indented with spaces, not tabs',
    ]);
  });
  it('places an unset environment variable at its first use', async () => {
    expect(await problemsOf('llm:\n  model: m\n  apiKey: $AGENTD_UNIT_UNSET\n')).toEqual([
      '3:3: llm.apiKey: environment variable AGENTD_UNIT_UNSET is not set (referenced at llm.apiKey)',
    ]);
  });
});

describe('command-line mistakes', () => {
  it('names an unknown option with the one it probably meant, not node:util advice', () => {
    expect(() => parseCliArgs(['--agnet', 'a.yml'])).toThrow('unknown option --agnet; did you mean --agent?');
    expect(() => parseCliArgs(['--bogus'])).toThrow(/^unknown option --bogus \(agentd --help lists them\)$/);
  });
});
