/**
 * Approve versus delete, raced through the real server (issue 23, item 7): a session whose tool
 * call waits for approval gets `POST …/approvals/{callId}` and `DELETE /api/sessions/{id}` at once,
 * many times over, on the JSONL store and (when redis-server is present) on Redis. Every run must
 * hold: the tool runs only for an approval that answered 200 (one that lost answers 404);
 * afterwards the session has no approvals, no history, and no log (no file, no Redis stream), even
 * once later work has gone through the service and once the service has stopped (every outbox drained).
 */
import { randomUUID } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileNameOf } from '../../src/store/session-file-name.ts';
import { api, roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { askForMarker, markerServer, marks, pendingMark, together } from '../support/approval-race.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import type { RunningApp } from '../support/start-app.ts';

const ITERATIONS = 24;

const env = useSimulatorAndFolder('agentd-delete-race-');

async function boot(storage: Record<string, unknown>, markerFile: string): Promise<RunningApp> {
  return env.apps.start(
    {
      mcpServers: { marker: markerServer(markerFile) },
      toolPolicy: askForMarker,
      storage,
      server: roomyLimits,
      llm: { timeoutMs: 10_000 },
    },
    { modelUrl: env.sim.url },
  );
}

interface Outcome {
  sessionId: string;
  approve: number;
  deleteStatus: number;
}

/** One race: a call waiting for approval, then approve and delete sent together. */
async function race(app: RunningApp, sessionId: string, deleteFirst: boolean): Promise<Outcome> {
  const callId = await pendingMark(app, sessionId);
  const approve = () => api(app.url, 'POST', `/api/sessions/${sessionId}/approvals/${callId}`, { decision: 'approve' });
  const remove = () => api(app.url, 'DELETE', `/api/sessions/${sessionId}`);
  // Both at once; which one leaves first alternates, so both sides of the race come up.
  const [approved, deleted] = await together(approve, remove, deleteFirst);
  expect(deleted.status).toBe(200);
  expect([200, 404]).toContain(approved.status);
  if (approved.status === 404) expect(approved.body.error.code).toBe('APPROVAL_NOT_FOUND');
  return { sessionId, approve: approved.status, deleteStatus: deleted.status };
}

/** What a deleted session must look like from outside. */
async function expectGone(app: RunningApp, sessionId: string) {
  const approvals = await api(app.url, 'GET', `/api/sessions/${sessionId}/approvals`);
  expect(approvals.status === 404 || approvals.body.approvals.length === 0).toBe(true);
  const history = await api(app.url, 'GET', `/api/sessions/${sessionId}/history`);
  expect(history.status === 404 || history.body.events.length === 0).toBe(true);
}

async function runRaces(
  app: RunningApp,
  markerFile: string,
  prefix: string,
  noLog: (sessionId: string) => Promise<void>,
) {
  const outcomes: Outcome[] = [];
  for (let i = 0; i < ITERATIONS; i++) outcomes.push(await race(app, `${prefix}-${i}`, i % 2 === 1));
  // A later positive event: a whole turn of another session has gone through the service and its store.
  const later = await api(app.url, 'POST', '/api/message-sync', {
    sessionId: `${prefix}-after`,
    message: 'after the races',
  });
  expect(later.status).toBe(200);
  const ran = await marks(markerFile);
  for (const o of outcomes) {
    const at = ran.get(o.sessionId);
    if (o.approve === 404) expect(at, `${o.sessionId}: the tool ran though its approval was refused`).toBeUndefined();
    // A call started before the delete (its approval won) may still finish in the tool server after
    // the delete answered: it was aborted here, but the server had it already. Its result is never stored.
    if (at !== undefined) expect(o.approve, `${o.sessionId}: the tool ran without a successful approval`).toBe(200);
    await expectGone(app, o.sessionId);
    await noLog(o.sessionId);
  }
  const list = (await api(app.url, 'GET', '/api/sessions')).body.sessions as { id: string }[];
  expect(list.map((s) => s.id).filter((id) => id.startsWith(`${prefix}-`) && id !== `${prefix}-after`)).toEqual([]);
  await env.apps.stop(app); // every outbox drained: a late write would be in the log now
  for (const o of outcomes) await noLog(o.sessionId);
  const counts = {
    approved: outcomes.filter((o) => o.approve === 200).length,
    refused: outcomes.filter((o) => o.approve === 404).length,
    toolRan: outcomes.filter((o) => ran.has(o.sessionId)).length,
  };
  console.info(`[delete-race ${prefix}] ${ITERATIONS} races: ${JSON.stringify(counts)}`);
  return outcomes;
}

describe('approve versus delete (jsonl)', () => {
  it(`never runs a tool after DELETE answered, nor writes the deleted session again (${ITERATIONS} races)`, async () => {
    const storeDir = join(env.dir, 'sessions');
    const markerFile = join(env.dir, 'marks-jsonl');
    const app = await boot({ type: 'jsonl', dir: storeDir }, markerFile);
    const noFile = async (sessionId: string) => {
      await expect(stat(join(storeDir, fileNameOf(sessionId)))).rejects.toMatchObject({ code: 'ENOENT' });
    };
    const outcomes = await runRaces(app, markerFile, 'race', noFile);
    expect(outcomes).toHaveLength(ITERATIONS);
    // Session logs only (agentd's own files, such as the record store's, start with a dot).
    const logs = (await readdir(storeDir)).filter((f) => f.endsWith('.jsonl') && !f.startsWith('.'));
    expect(logs).toEqual([fileNameOf('race-after')]);
  }, 240_000);
});

const redisEnabled = hasRedisServer();

describe.skipIf(!redisEnabled)('approve versus delete (redis)', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it(`never runs a tool after DELETE answered, nor writes the deleted session to Redis again (${ITERATIONS} races)`, async () => {
    const keyPrefix = `race${randomUUID()}:`;
    const markerFile = join(env.dir, 'marks-redis');
    const app = await boot({ type: 'redis', url: redis.url, keyPrefix }, markerFile);
    const client = createClient({ url: redis.url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      const noStream = async (sessionId: string) => {
        expect(await client.exists(`${keyPrefix}{s:${sessionId}}:ev`)).toBe(0);
        expect(await client.hExists(`${keyPrefix}sessions`, sessionId)).toBe(0);
      };
      const outcomes = await runRaces(app, markerFile, 'rrace', noStream);
      expect(outcomes).toHaveLength(ITERATIONS);
    } finally {
      client.destroy();
    }
  }, 240_000);
});
