/**
 * Schedules bounded per principal (issue 72, item 2), over real HTTP with the model simulator: a principal that is
 * not an admin is refused a schedule that fires more often than `minIntervalMs`, carries a message longer than
 * `maxMessageBytes`, or is one more than `perPrincipal`, each with the spec's error envelope naming the limit (an
 * admin is not capped); ids live in each owner's namespace, so another principal's create learns nothing; a
 * schedule's per-tick sessions count toward its owner's `sessionsPerPrincipal` (a tick past it fails its run,
 * recorded and logged); `overlap: queue` holds at most `queuedRuns`, and deleting the schedule drops them.
 */
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { everythingStdio, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import type { RunningApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';

const env = useSimulatorAndFolder('agentd-schedule-bounds-');

const ALICE = 'alice-key-0123456789';
const BOB = 'bob-key-0123456789ab';
const OPS = 'ops-key-0123456789ab';
const keys = [
  { name: 'alice', key: ALICE, scopes: ['schedule', 'chat'] },
  { name: 'bob', key: BOB, scopes: ['schedule'] },
  { name: 'ops', key: OPS, scopes: ['admin'] },
];
const YEARLY = '0 3 1 1 *';

interface Reply {
  status: number;
  body: any;
}
async function call(app: RunningApp, key: string | undefined, method: string, path: string, body?: unknown) {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: { ...(key && { authorization: `Bearer ${key}` }), 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const reply: Reply = { status: res.status, body: await res.json() };
  return reply;
}
const refusal = (r: Reply) => [r.status, r.body.error?.code, r.body.error?.details];
const runsOf = async (app: RunningApp, key: string | undefined, id: string) =>
  (await call(app, key, 'GET', `/api/schedules/${id}/runs`)).body.runs as {
    status: string;
    reason?: string;
    session?: string;
    plannedAt: string;
  }[];

describe('schedules bounded per principal', () => {
  it('refuses a schedule that fires too often, a message too long, and one past the count; an admin is not capped', async () => {
    const limits = { ...roomyLimits.limits, schedules: { perPrincipal: 2, maxMessageBytes: 64 } };
    const app = await env.apps.start({ server: { ...roomyLimits, limits, auth: { keys } } }, { modelUrl: env.sim.url });
    const make = (key: string, body: object) =>
      call(app, key, 'POST', '/api/schedules', { message: 'm', cron: YEARLY, ...body });

    const tooOften = await make(ALICE, { id: 'fast', cron: undefined, everyMs: 500 });
    expect(refusal(tooOften)).toEqual([
      400,
      'INVALID_REQUEST',
      { field: 'everyMs', limit: 1000, reason: 'min_interval' },
    ]);
    expect(tooOften.body).toMatchObject({ success: false, timestamp: expect.any(String) });
    expect(tooOften.body.error.message).toContain('server.limits.schedules.minIntervalMs');
    // A jitter past an hour: a timer's overflow fired 1e12 at once, and 3e9 left its tick claimed, never sent.
    for (const jitterMs of [1e12, 3e9]) {
      const jittery = await make(ALICE, { id: 'jitter', jitterMs });
      expect(refusal(jittery)).toEqual([400, 'INVALID_REQUEST', expect.objectContaining({ field: 'jitterMs' })]);
      expect(jittery.body.error.message).toContain('jitterMs: must be at most 3600000');
    }
    const tooLong = await make(ALICE, { id: 'long', message: 'é'.repeat(33) }); // 66 bytes
    expect(refusal(tooLong)).toEqual([
      400,
      'INVALID_REQUEST',
      { field: 'message', limit: 64, reason: 'message_too_large' },
    ]);
    expect((await make(ALICE, { id: 'one', everyMs: 1000, cron: undefined })).status).toBe(200);
    expect((await make(ALICE, { id: 'two' })).status).toBe(200);
    expect(refusal(await make(ALICE, { id: 'three' }))).toEqual([
      429,
      'RATE_LIMIT_EXCEEDED',
      { limit: 2, remaining: 0, reason: 'schedules_per_principal' },
    ]);
    // Deleting one makes room; another principal has its own count.
    expect((await call(app, ALICE, 'DELETE', '/api/schedules/one')).status).toBe(200);
    expect((await make(ALICE, { id: 'three' })).status).toBe(200);
    expect((await make(BOB, { id: 'b1' })).status).toBe(200);
    // An admin is trusted, as with sessions: any rate, any message, any number.
    for (const id of ['o1', 'o2', 'o3'])
      expect((await make(OPS, { id, cron: undefined, everyMs: 200, message: 'x'.repeat(100) })).status).toBe(200);
    expect((await call(app, OPS, 'PATCH', '/api/schedules/o1', { paused: true })).status).toBe(200);
  });

  it("ids live in each owner's namespace: another principal's create with an existing id learns nothing", async () => {
    const app = await env.apps.start({ server: { ...roomyLimits, auth: { keys } } }, { modelUrl: env.sim.url });
    const make = (key: string, body: object) =>
      call(app, key, 'POST', '/api/schedules', { id: 'daily', cron: YEARLY, ...body });
    expect((await make(ALICE, { message: 'alice' })).status).toBe(200);
    const bobs = await make(BOB, { message: 'bob' });
    expect([bobs.status, bobs.body.schedule?.owner]).toEqual([200, 'bob']);
    // Each reaches its own; a second create in one's own namespace is refused as before.
    expect((await call(app, ALICE, 'GET', '/api/schedules/daily')).body.schedule).toMatchObject({ message: 'alice' });
    expect((await call(app, BOB, 'GET', '/api/schedules/daily')).body.schedule).toMatchObject({ message: 'bob' });
    expect(refusal(await make(ALICE, { message: 'again' }))).toEqual([
      400,
      'INVALID_REQUEST',
      expect.objectContaining({ field: 'id' }),
    ]);
    expect((await call(app, BOB, 'GET', '/api/schedules/daily?owner=alice')).status).toBe(403);
    expect((await call(app, ALICE, 'GET', '/api/schedules/daily/runs?owner=alice&limit=5')).status).toBe(200); // the console's
    expect((await call(app, BOB, 'GET', '/api/schedules/daily/runs')).status).toBe(200);
    // An admin names the owner when two have the id; a delete reaches only that one.
    expect(refusal(await call(app, OPS, 'GET', '/api/schedules/daily'))).toEqual([
      400,
      'INVALID_REQUEST',
      { field: 'owner' },
    ]);
    expect((await call(app, OPS, 'DELETE', '/api/schedules/daily?owner=bob')).body.deleted).toBe(true);
    expect((await call(app, BOB, 'GET', '/api/schedules/daily')).status).toBe(404);
    expect((await call(app, OPS, 'GET', '/api/schedules/daily')).body.schedule).toMatchObject({ owner: 'alice' });
    const listed = (await call(app, ALICE, 'GET', '/api/schedules')).body.schedules as object[];
    expect(listed).toEqual([expect.not.objectContaining({ quotaHolder: expect.anything() })]);
  });

  it("a schedule's per-tick sessions count toward its owner's sessionsPerPrincipal: a tick past it fails its run, logged", async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const limits = { ...roomyLimits.limits, sessionsPerPrincipal: 3 };
    const app = await env.apps.start(
      { server: { ...roomyLimits, limits, auth: { keys } } },
      { modelUrl: env.sim.url, deps: { log } },
    );
    for (const sessionId of ['own-1', 'own-2'])
      expect((await call(app, ALICE, 'POST', '/api/message-sync', { message: 'hi', sessionId })).status).toBe(200);
    const made = await call(app, ALICE, 'POST', '/api/schedules', {
      id: 'per-tick',
      everyMs: 1000,
      message: 'tick {{firedAt}}',
      session: 'run-{{firedAt}}',
    });
    expect(made.status).toBe(200);
    await expect
      .poll(async () => (await runsOf(app, ALICE, 'per-tick')).find((r) => r.status === 'failed'), PATIENT)
      .toMatchObject({ reason: expect.stringMatching(/^RATE_LIMIT_EXCEEDED: At most 3 sessions/) });
    expect((await call(app, ALICE, 'PATCH', '/api/schedules/per-tick', { paused: true })).status).toBe(200);
    const sessions = (await call(app, ALICE, 'GET', '/api/sessions')).body.sessions as { sessionId: string }[];
    expect(sessions).toHaveLength(3); // own-1, own-2 and one run's: never more
    expect((await call(app, ALICE, 'POST', '/api/message', { message: 'x', sessionId: 'own-3' })).status).toBe(429);
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; schedule?: string; err?: unknown });
    const failed = logged.filter((l) => l.msg === 'schedule fire failed');
    expect(failed[0]).toMatchObject({
      schedule: 'alice/per-tick',
      code: 'RATE_LIMIT_EXCEEDED',
      error: expect.stringContaining('At most 3 sessions'),
    });
    expect(failed[0]).not.toHaveProperty('err'); // one line, no stack
    expect(failed).toHaveLength(1); // once a minute at most, however many ticks were refused
  });

  it('overlap queue holds at most queuedRuns while a run waits; deleting the schedule drops them, none reaches the session', async () => {
    const session = 'queued-runs';
    const doc = {
      server: { ...roomyLimits, limits: { ...roomyLimits.limits, schedules: { queuedRuns: 2 } } },
      llm: { timeoutMs: 10_000 },
      mcpServers: { everything: everythingStdio },
      toolPolicy: { default: 'allow', rules: [{ server: 'everything', tool: 'echo', action: 'ask' }] },
    };
    const app = await env.apps.start(doc, { modelUrl: env.sim.url });
    const made = await call(app, undefined, 'POST', '/api/schedules', {
      id: 'q',
      everyMs: 1000,
      overlap: 'queue',
      message: 'tick {{firedAt}} [[tool:echo {"message":"queued"}]]',
      session,
    });
    expect(made.status).toBe(200);
    // The first run waits for an approval; two ticks queue behind it, the next ones find the queue full.
    await expect
      .poll(async () => (await runsOf(app, undefined, 'q')).filter((r) => r.reason === 'queueFull').length, PATIENT)
      .toBeGreaterThanOrEqual(2);
    const runs = await runsOf(app, undefined, 'q');
    expect(runs.filter((r) => r.status === 'queued')).toHaveLength(2);
    expect(runs.filter((r) => r.status === 'sent')).toHaveLength(1);
    expect((await call(app, undefined, 'DELETE', '/api/schedules/q')).body.deleted).toBe(true);

    const { approvals } = (await call(app, undefined, 'GET', `/api/sessions/${session}/approvals`)).body as {
      approvals: { callId: string }[];
    };
    expect(approvals).toHaveLength(1);
    const answer = { decision: 'approve' };
    const path = `/api/sessions/${session}/approvals/${approvals[0]!.callId}`;
    expect((await call(app, undefined, 'POST', path, answer)).status).toBe(200);
    // A message sent after the run ended runs next: nothing the schedule queued ran before it, or will after it.
    const after = await call(app, undefined, 'POST', '/api/message-sync', {
      message: 'after the delete',
      sessionId: session,
    });
    expect(after.status).toBe(200);
    const history = (await call(app, undefined, 'GET', `/api/sessions/${session}/history`)).body.events as {
      event: string;
      data: { content?: string };
    }[];
    const said = history.filter((f) => f.event === 'userMessage').map((f) => f.data.content?.split(' [[')[0]);
    expect(said).toEqual([expect.stringMatching(/^tick /), 'after the delete']);
  });
});
