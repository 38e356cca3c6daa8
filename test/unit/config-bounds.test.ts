/**
 * Keys the agent file refuses, naming them (issue 81 item 9): a budget for `__proto__` (which a record drops without
 * a word) or for memory's `@shared` (no caller is it), and a schedule's `jitterMs` past an hour (a timer overflowed
 * at 1e12 and fired at once; 3e9 left its tick claimed and never sent).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.ts';

/** The problems of loading `text` as an agent file (none: it loaded). */
async function problemsOf(text: string): Promise<string[]> {
  const file = join(await mkdtemp(join(tmpdir(), 'agentd-config-bounds-')), 'agent.yml');
  await writeFile(file, `llm:\n  model: m\n  baseURL: http://127.0.0.1:9/v1\n${text}`);
  try {
    await loadConfig(file, {});
    return [];
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems.map((p) => p.replace(`${file}:`, ''));
  }
}

describe('budgets.principals', () => {
  it('refuses __proto__ and @shared, naming the key', async () => {
    const proto = await problemsOf('budgets:\n  principals:\n    __proto__: { day: 1 }\n');
    expect(proto.join('\n')).toMatch(/budgets\.principals\.__proto__.*names no principal/);
    const shared = await problemsOf('budgets:\n  principals:\n    "@shared": { day: 1 }\n');
    expect(shared.join('\n')).toMatch(/budgets\.principals\.@shared/);
  });

  it('takes a key name, jwt:<subject> and @unnamed', async () => {
    const file =
      'budgets:\n  principals:\n    alice: { day: 1 }\n    "jwt:u-1": { day: 2 }\n    "@unnamed": { day: 3 }\n';
    expect(await problemsOf(file)).toEqual([]);
  });
});

describe('schedules[].jitterMs', () => {
  it('is at most an hour, the refusal naming the key', async () => {
    const at = (jitterMs: number) =>
      problemsOf(`schedules:\n  - id: j\n    everyMs: 60000\n    message: m\n    jitterMs: ${jitterMs}\n`);
    for (const jitterMs of [1e12, 3e9, 3_600_001])
      expect((await at(jitterMs)).join('\n')).toMatch(/schedules\[0\]\.jitterMs.*at most 3600000/);
    expect(await at(3_600_000)).toEqual([]);
  });
});
