/**
 * A log written before questions were one event pair (event version 3, issue 56 item 2) opens as it did: its
 * frames replay the same, its pending approval is listed and answered, its closed questions of every kind (an
 * approval denied with a reason, an elicitation declined, a sampling request approved, a client tool call answered)
 * stay closed. test/fixtures/v3-log/legacy.jsonl is what a JSONL store of version 3 wrote for those five turns
 * (the pending approval's deadline moved to 2099); history.json is what that version's history route listed.
 */
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, everythingStdio, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { PATIENT, until } from '../support/wait.ts';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'v3-log');
const S = 'legacy';
const PENDING = 'call_8_0';
const env = useSimulatorAndFolder('agentd-v3-log-');

async function openFixture() {
  const dir = join(env.dir, 'log');
  cpSync(join(FIXTURE, 'legacy.jsonl'), join(dir, 'legacy.jsonl'));
  const app = await env.apps.start(
    {
      storage: { type: 'jsonl', dir },
      toolPolicy: { rules: [{ server: 'everything', tool: 'echo', action: 'ask' }], timeoutMs: 120_000 },
      mcpServers: { everything: { ...everythingStdio, timeout: 60_000, sampling: 'ask' } },
      server: roomyLimits,
      llm: { timeoutMs: 10_000 },
    },
    { modelUrl: env.sim.url },
  );
  await until(
    async () =>
      (await api(app.url, 'GET', '/api/mcp/servers')).body.servers.every(
        (s: { status: string }) => s.status === 'connected',
      ),
    'server-everything connected',
  );
  return app;
}

describe('a version 3 log of questions', { timeout: 120_000 }, () => {
  it('replays the same frames, lists and answers its pending approval, and keeps the others closed', async () => {
    const app = await openFixture();
    const history = async () =>
      (await api(app.url, 'GET', `/api/sessions/${S}/history`)).body.events as { event: string; data: any }[];
    const expected = join(FIXTURE, 'history.json');
    expect(await history()).toEqual(JSON.parse(readFileSync(expected, 'utf8')));

    const list = async (route: string, key: string) =>
      ((await api(app.url, 'GET', `/api/sessions/${S}/${route}`)).body[key] as { callId?: string; id?: string }[]).map(
        (r) => r.callId ?? r.id,
      );
    expect(await list('approvals', 'approvals')).toEqual([PENDING]);
    expect(await list('elicitations', 'elicitations')).toEqual([]);
    expect(await list('client-tools', 'clientTools')).toEqual([]);

    const closed: [string, string, Record<string, unknown>, string][] = [
      ['approvals', 'call_0_0', { decision: 'approve' }, 'APPROVAL_ALREADY_RESOLVED'],
      [
        'elicitations',
        'el_595e9272-94ef-4321-ad14-f0990defce25',
        { action: 'decline' },
        'ELICITATION_ALREADY_RESOLVED',
      ],
      ['approvals', 'call_4_0~sampling-cff74084', { decision: 'approve' }, 'APPROVAL_ALREADY_RESOLVED'],
      ['client-tools', 'call_6_0', { content: 'x' }, 'APPROVAL_ALREADY_RESOLVED'],
    ];
    for (const [route, id, body, code] of closed) {
      const res = await api(app.url, 'POST', `/api/sessions/${S}/${route}/${encodeURIComponent(id)}`, body);
      expect([res.status, res.body.error?.code]).toEqual([409, code]);
    }

    const answered = await api(app.url, 'POST', `/api/sessions/${S}/approvals/${PENDING}`, { decision: 'approve' });
    expect(answered.status).toBe(200);
    await expect.poll(async () => (await history()).at(-1)?.event, PATIENT).toBe('response');
    const after = await history();
    expect(after.find((f) => f.event === 'toolApprovalResolved' && f.data.callId === PENDING)?.data.by).toBe('rest');
    expect(after.find((f) => f.event === 'toolResult' && f.data.callId === PENDING)?.data.success).toBe(true);
    expect(await list('approvals', 'approvals')).toEqual([]);
  });
});
