/**
 * Schedule caps hold for schedules already kept (issue 72), over real HTTP with the model simulator:
 * - a restart with lower `server.limits.schedules` suspends the schedules past them (fire rate, message, count: the
 *   holder's newest ones): listed with `suspended` and no `nextRunAt`, never fired, refused a resume, one warning
 *   naming them and their owner; deleting one lets the next oldest fire again;
 * - on Redis `perPrincipal` is counted in the shared store: two principals' concurrent creates spread over two
 *   instances never take either past the cap.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import type { RunningApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';

const env = useSimulatorAndFolder('agentd-schedule-resume-');

const ALICE = 'alice-key-0123456789';
const BOB = 'bob-key-0123456789ab';
const keys = [
  { name: 'alice', key: ALICE, scopes: ['schedule'] },
  { name: 'bob', key: BOB, scopes: ['schedule'] },
];
const YEARLY = '0 3 1 1 *';

interface Reply {
  status: number;
  body: any;
}
async function call(app: RunningApp, key: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}
const listed = async (app: RunningApp, key: string) =>
  new Map(
    ((await call(app, key, 'GET', '/api/schedules')).body.schedules as { id: string }[]).map((s) => [s.id, s as any]),
  );

/** The service's log lines at warn and above, parsed. */
function warnLog() {
  const lines: Record<string, any>[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

describe('schedules kept past the caps', () => {
  it('are suspended after a restart with lower limits: listed so, never fired, one warning; a delete frees room', async () => {
    const server = (schedules: object) => ({
      ...roomyLimits,
      limits: { ...roomyLimits.limits, schedules },
      auth: { keys },
    });
    const storage = { type: 'jsonl', dir: env.dir };
    const first = await env.apps.start(
      { storage, server: server({ perPrincipal: 10, minIntervalMs: 1000, maxMessageBytes: 1024 }) },
      { modelUrl: env.sim.url },
    );
    // Ids sort as they were made: the holder's oldest are the ones kept within the count.
    const made = [
      { id: 'a-often', everyMs: 2000, message: 'often', session: 'often-runs' },
      { id: 'b-wordy', cron: YEARLY, message: 'w'.repeat(100) },
      { id: 'c-kept', everyMs: 5000, message: 'kept', session: 'kept-runs' },
      { id: 'd-extra', cron: YEARLY, message: 'extra' },
    ];
    for (const body of made) expect((await call(first, ALICE, 'POST', '/api/schedules', body)).status).toBe(200);
    await env.apps.stop(first);
    const restartedAt = new Date().toISOString(); // the first instance may have fired `a-often` (2 s) on a slow machine

    const { log, lines } = warnLog();
    const second = await env.apps.start(
      { storage, server: server({ perPrincipal: 3, minIntervalMs: 5000, maxMessageBytes: 64 }) },
      { modelUrl: env.sim.url, deps: { log } },
    );
    const shown = await listed(second, ALICE);
    const suspension = (id: string) => shown.get(id)?.suspended as { reason: string; limit: number } | undefined;
    expect(['a-often', 'b-wordy', 'c-kept', 'd-extra'].map((id) => suspension(id)?.reason)).toEqual([
      'min_interval',
      'message_too_large',
      undefined,
      'schedules_per_principal',
    ]);
    expect(suspension('a-often')).toMatchObject({ limit: 5000, message: expect.stringContaining('minIntervalMs') });
    expect(shown.get('a-often').nextRunAt).toBeUndefined();
    expect(shown.get('c-kept').nextRunAt).toEqual(expect.any(String));
    const warned = lines.filter((l) => l.suspended);
    expect(warned).toHaveLength(1);
    expect(warned[0]!.suspended).toEqual([
      { schedule: 'a-often', owner: 'alice', holder: 'alice', reason: 'min_interval', limit: 5000 },
      { schedule: 'b-wordy', owner: 'alice', holder: 'alice', reason: 'message_too_large', limit: 64 },
      { schedule: 'd-extra', owner: 'alice', holder: 'alice', reason: 'schedules_per_principal', limit: 3 },
    ]);

    // A resume is refused with the reason; a pause is not.
    const resumed = await call(second, ALICE, 'PATCH', '/api/schedules/a-often', { paused: false });
    expect([resumed.status, resumed.body.error?.details?.reason]).toEqual([400, 'min_interval']);
    const extra = await call(second, ALICE, 'PATCH', '/api/schedules/d-extra', { paused: false });
    expect([extra.status, extra.body.error?.code]).toEqual([429, 'RATE_LIMIT_EXCEEDED']);
    // The kept one fires (every 5 s); the one every 2 s, suspended, never did meanwhile.
    const runs = async (id: string) => (await call(second, ALICE, 'GET', `/api/schedules/${id}/runs`)).body.runs;
    await expect.poll(async () => (await runs('c-kept')).length, PATIENT).toBeGreaterThan(0);
    expect((await runs('a-often')).filter((r: { firedAt: string }) => r.firedAt >= restartedAt)).toEqual([]);

    // Deleting one of the oldest lets the newest fire again.
    expect((await call(second, ALICE, 'DELETE', '/api/schedules/a-often')).status).toBe(200);
    const after = await listed(second, ALICE);
    expect(after.get('d-extra').suspended).toBeUndefined();
    expect(after.get('d-extra').nextRunAt).toEqual(expect.any(String));
    expect(after.get('b-wordy').suspended.reason).toBe('message_too_large');
  });
});

describe.skipIf(!hasRedisServer())('schedules counted across instances on Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await env.apps.stopAll();
    await redis?.stop();
  });

  it("two principals' concurrent creates on two instances never pass perPrincipal", async () => {
    const doc = {
      storage: { type: 'redis', url: redis.url, keyPrefix: `sch${randomUUID()}:` },
      server: { ...roomyLimits, limits: { ...roomyLimits.limits, schedules: { perPrincipal: 3 } }, auth: { keys } },
    };
    const instances = [await env.apps.start(doc), await env.apps.start(doc)];
    const creates = [ALICE, BOB].flatMap((key) =>
      Array.from({ length: 10 }, (_, i) =>
        call(instances[i % 2]!, key, 'POST', '/api/schedules', { id: `s${i}`, cron: YEARLY, message: 'm' }),
      ),
    );
    const replies = await Promise.all(creates);
    for (const [n, key] of [ALICE, BOB].entries()) {
      const own = replies.slice(n * 10, n * 10 + 10);
      expect(
        own.filter((r) => r.status === 200),
        key,
      ).toHaveLength(3);
      expect(own.filter((r) => r.status === 429 && r.body.error.code === 'RATE_LIMIT_EXCEEDED')).toHaveLength(7);
    }
    // Each instance lists each principal's three (another instance's once it looked at the store), none suspended.
    for (const svc of instances)
      for (const key of [ALICE, BOB])
        await expect
          .poll(async () => [...(await listed(svc, key)).values()].map((s) => s.suspended ?? 'fires'), PATIENT)
          .toEqual(['fires', 'fires', 'fires']);
    // A delete on one instance makes room on the other.
    const gone = (await listed(instances[0]!, ALICE)).keys().next().value!;
    expect((await call(instances[0]!, ALICE, 'DELETE', `/api/schedules/${gone}`)).status).toBe(200);
    const again = await call(instances[1]!, ALICE, 'POST', '/api/schedules', {
      id: 'later',
      cron: YEARLY,
      message: 'm',
    });
    expect(again.status).toBe(200);
    const more = await call(instances[0]!, ALICE, 'POST', '/api/schedules', { id: 'more', cron: YEARLY, message: 'm' });
    expect(more.status).toBe(429);
  });
});
