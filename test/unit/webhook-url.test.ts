/**
 * A webhook URL never carries a password (issue 72, smaller items): `user:pass@` is refused in the agent file (naming
 * `webhooks.<n>.url`, without echoing the password) and at `POST /api/webhooks` (test/int/deliveries-fair.test.ts),
 * and a URL kept before they were refused is listed with `***` for its password.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { webhookRecordOf } from '../../src/webhooks/commands.ts';

const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;

describe('webhook URLs with credentials', () => {
  it('are refused in the agent file, naming the key, never echoing the password', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'agentd-webhook-url-')), 'agent.yml');
    const url = 'https://hooks:pa55word@example.com/agentd';
    await writeFile(
      file,
      `llm:\n  model: m\nwebhooks:\n  - url: ${url}\n    events: [turn.completed]\n    secret: ${secret}\n`,
    );
    const problems = await loadConfig(file, {}).then(
      () => [],
      (e: unknown) => (e instanceof ConfigError ? e.problems : [String(e)]),
    );
    expect(problems).toEqual([expect.stringMatching(/webhooks\[0\]\.url: must not carry credentials/)]);
    expect(problems.join('\n')).not.toContain('pa55word');
  });

  it('kept before they were refused, are listed with *** for the password', () => {
    const hook = {
      ...{ id: 'old', url: 'https://hooks:pa55word@example.com/agentd', events: ['turn.completed' as const] },
      ...{ secret, retryScheduleMs: [1000], timeoutMs: 1000 },
    };
    expect(webhookRecordOf({ hook, source: 'api' }).url).toBe('https://hooks:***@example.com/agentd');
  });
});
