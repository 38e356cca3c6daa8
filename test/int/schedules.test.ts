/**
 * Schedules as a user meets them: the real service and the model simulator, a 1-second cron. Each fire is a turn in
 * its session (the message carries its tick, so a tick sent twice would show twice); runs are listed over REST;
 * two instances on one Redis fire each tick once; a restart over the same JSONL folder neither repeats a tick nor
 * loses the catchUp one; bad expressions answer 400 naming the field.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { api, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { hasRedisServer, startRedis } from '../support/redis.ts';
import type { RunningApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';

const env = useSimulatorAndFolder('agentd-schedules-');
const EVERY_SECOND = '*/1 * * * * *';

/** The ticks of the user messages of a session, in order (the message template puts its tick in). */
async function ticksIn(app: RunningApp, session: string): Promise<string[]> {
  const { body } = await api(app.url, 'GET', `/api/sessions/${session}/history`);
  return ((body?.events ?? []) as { event: string; data: { content?: string } }[])
    .filter((f) => f.event === 'userMessage')
    .map((f) => f.data.content?.replace(/^tick /, '') ?? '');
}
const runsOf = async (app: RunningApp, id: string) =>
  (await api(app.url, 'GET', `/api/schedules/${id}/runs`)).body.runs as { status: string; plannedAt: string }[];
const boot = (doc: Record<string, unknown>) =>
  env.apps.start({ server: roomyLimits, ...doc }, { modelUrl: env.sim.url });

describe('schedules', () => {
  it('a REST schedule and an agent-file schedule each fire every tick of a window, as turns listed with their runs', async () => {
    const app = await boot({
      schedules: [{ id: 'from-file', everyMs: 1000, message: 'tick {{firedAt}}', session: 'file-runs' }],
    });
    const made = await api(app.url, 'POST', '/api/schedules', {
      id: 'every-second',
      cron: EVERY_SECOND,
      timezone: 'Europe/Paris',
      message: 'tick {{firedAt}}',
      session: 'sched-runs',
    });
    expect(made.status).toBe(200);
    expect(made.body.schedule).toMatchObject({ id: 'every-second', source: 'api', paused: false, overlap: 'skip' });
    await expect
      .poll(async () => (await runsOf(app, 'every-second')).filter((r) => r.status === 'finished').length, PATIENT)
      .toBeGreaterThanOrEqual(3);
    const ticks = await ticksIn(app, 'sched-runs');
    expect(new Set(ticks).size).toBe(ticks.length);
    for (const t of ticks) expect(Date.parse(t) % 1000).toBe(0);
    const run = (await runsOf(app, 'every-second')).find((r) => r.status === 'finished');
    expect(run).toMatchObject({
      session: 'sched-runs',
      turnId: expect.any(String),
      firedAt: expect.any(String),
      finishedAt: expect.any(String),
      usage: { totalTokens: expect.any(Number) },
    });
    await expect.poll(async () => (await ticksIn(app, 'file-runs')).length, PATIENT).toBeGreaterThanOrEqual(2);

    const paused = await api(app.url, 'PATCH', '/api/schedules/every-second', { paused: true });
    expect(paused.body.schedule.paused).toBe(true);
    const listed = (await api(app.url, 'GET', '/api/schedules')).body.schedules.map((s: { id: string }) => s.id);
    expect(listed.sort()).toEqual(['every-second', 'from-file']);
    expect((await api(app.url, 'DELETE', '/api/schedules/every-second')).body.deleted).toBe(true);
    expect((await api(app.url, 'GET', '/api/schedules/every-second')).status).toBe(404);
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toMatch(/agentd_schedule_fires_total [1-9]/);
    expect(metrics).toMatch(/agentd_schedule_lag_seconds_count [1-9]/);
  });

  it('answers a browser preflight for PATCH /api/schedules/{id} (PATCH is among the default allowed methods)', async () => {
    const origin = 'https://console.example';
    const app = await boot({ server: { ...roomyLimits, cors: { origins: [origin] } } });
    await api(app.url, 'POST', '/api/schedules', { id: 'cors', cron: '0 0 1 1 *', message: 'm' });
    const preflight = await fetch(`${app.url}/api/schedules/cors`, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'PATCH' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
    expect(preflight.headers.get('access-control-allow-methods')?.split(', ')).toContain('PATCH');
    const patched = await fetch(`${app.url}/api/schedules/cors`, {
      method: 'PATCH',
      headers: { Origin: origin, 'Content-Type': 'application/json' },
      body: JSON.stringify({ paused: true }),
    });
    expect(patched.status).toBe(200);
    expect(patched.headers.get('access-control-allow-origin')).toBe(origin);
  });

  it('refuses a bad expression, zone or interval with 400 INVALID_REQUEST and a missing one with MISSING_FIELD, naming the field', async () => {
    const app = await boot({});
    const post = (body: object) => api(app.url, 'POST', '/api/schedules', { id: 'bad', message: 'm', ...body });
    const refusal = async (body: object) => {
      const { status, body: b } = await post(body);
      return [status, b.error.code, b.error.details.field];
    };
    expect(await refusal({ cron: '61 * * * *' })).toEqual([400, 'INVALID_REQUEST', 'cron']);
    expect(await refusal({ cron: '* * * * *', timezone: 'Mars/Olympus' })).toEqual([
      400,
      'INVALID_REQUEST',
      'timezone',
    ]);
    expect(await refusal({ everyMs: -5 })).toEqual([400, 'INVALID_REQUEST', 'everyMs']);
    expect(await refusal({ everyMs: 1000, session: `${'s'.repeat(120)}-{{firedAt}}` })).toEqual([
      400,
      'INVALID_REQUEST',
      'session',
    ]);
    expect(await refusal({})).toEqual([400, 'MISSING_FIELD', 'cron']);
    const noMessage = await api(app.url, 'POST', '/api/schedules', { id: 'bad', cron: '* * * * *' });
    expect([noMessage.status, noMessage.body.error.code, noMessage.body.error.details.field]).toEqual([
      400,
      'MISSING_FIELD',
      'message',
    ]);
  });

  it('another principal never sees a schedule (404); an admin reaches any', async () => {
    const keys = {
      keys: [
        { name: 'alice', key: 'alice-key-0123456789', scopes: ['schedule', 'chat'] },
        { name: 'bob', key: 'bob-key-0123456789ab', scopes: ['schedule'] },
        { name: 'ops', key: 'ops-key-0123456789ab', scopes: ['admin'] },
        { name: 'reader', key: 'reader-key-01234567', scopes: ['chat'] },
      ],
    };
    const app = await boot({ server: { ...roomyLimits, auth: keys } });
    const as = (key: string, method: string, path: string, body?: unknown) =>
      fetch(`${app.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    const made = await as('alice-key-0123456789', 'POST', '/api/schedules', {
      id: 'mine',
      cron: '0 0 1 1 *',
      message: 'm',
    });
    expect(made.status).toBe(200);
    expect(((await made.json()) as { schedule: { owner: string } }).schedule.owner).toBe('alice');
    expect((await as('bob-key-0123456789ab', 'GET', '/api/schedules/mine')).status).toBe(404);
    expect(
      ((await (await as('bob-key-0123456789ab', 'GET', '/api/schedules')).json()) as { schedules: unknown[] })
        .schedules,
    ).toEqual([]);
    expect((await as('ops-key-0123456789ab', 'GET', '/api/schedules/mine')).status).toBe(200);
    expect((await as('reader-key-01234567', 'GET', '/api/schedules')).status).toBe(403);
  });

  it('a restart over the same JSONL folder never fires a tick twice and fires the missed catchUp tick once', async () => {
    const dir = `${env.dir}/restart-${randomUUID()}`;
    const doc = {
      storage: { type: 'jsonl', dir },
      schedules: [{ id: 'r', everyMs: 1000, catchUp: 'last', message: 'tick {{firedAt}}', session: 'restart-runs' }],
    };
    const first = await boot(doc);
    await expect.poll(async () => (await ticksIn(first, 'restart-runs')).length, PATIENT).toBeGreaterThanOrEqual(2);
    await env.apps.stop(first);
    const stoppedAt = Date.now();
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(stoppedAt + 2500), PATIENT); // down across two ticks
    const second = await boot(doc);
    const lastBefore = Math.floor(Date.now() / 1000) * 1000;
    await expect.poll(async () => (await ticksIn(second, 'restart-runs')).length, PATIENT).toBeGreaterThanOrEqual(4);
    const ticks = await ticksIn(second, 'restart-runs');
    expect(new Set(ticks).size).toBe(ticks.length);
    // The catchUp tick: one tick from the downtime (after the stop, at or before the restart) was fired.
    const missed = ticks.map(Date.parse).filter((t) => t > stoppedAt && t <= lastBefore);
    expect(missed.length).toBeGreaterThanOrEqual(1);
  });

  it.skipIf(!hasRedisServer())('two instances on one Redis fire each tick once', async () => {
    const redis = await startRedis();
    try {
      const doc = {
        storage: { type: 'redis', url: redis.url, keyPrefix: `s${randomUUID()}:` },
        schedules: [
          { id: 'both', cron: EVERY_SECOND, message: 'tick {{firedAt}}', session: 'redis-runs', overlap: 'queue' },
        ],
      };
      const [a, b] = await Promise.all([boot(doc), boot(doc)]);
      await expect.poll(async () => (await ticksIn(a, 'redis-runs')).length, PATIENT).toBeGreaterThanOrEqual(5);
      // A schedule made on one instance is served, and paused, by the other.
      await api(a.url, 'POST', '/api/schedules', { id: 'made-on-a', cron: '0 3 1 1 *', message: 'm' });
      await expect.poll(async () => (await api(b.url, 'GET', '/api/schedules/made-on-a')).status, PATIENT).toBe(200);
      await api(b.url, 'PATCH', '/api/schedules/made-on-a', { paused: true });
      await expect
        .poll(async () => (await api(a.url, 'GET', '/api/schedules/made-on-a')).body.schedule.paused, PATIENT)
        .toBe(true);
      await env.apps.stop(a);
      await env.apps.stop(b);
      const c = await boot(doc); // reads the log the two wrote
      const ticks = await ticksIn(c, 'redis-runs');
      expect(new Set(ticks).size).toBe(ticks.length);
      const runs = await runsOf(c, 'both');
      expect(runs.filter((r) => r.status !== 'claimed').length).toBeGreaterThanOrEqual(ticks.length);
      await env.apps.stop(c);
    } finally {
      await redis.stop();
    }
  });
});
