/**
 * A2A `ListTasks`' `totalSize` (A2A v1.0 §3.1.4: the number of tasks matching the filter) through `@a2a-js/sdk`'s
 * v1.0 client, on JSONL and on Redis storage (skipped without a redis-server): without filters it is the caller's
 * task count on every page (the store's kept turn total), not a bound; it counts only the caller's own sessions,
 * drops when a session is deleted and is the same after a restart.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { roomyLimits, useSimulatorAndFolder } from '../support/messaging.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import type { RunningApp } from '../support/start-app.ts';
import { authed, listRequest, send, text, v1Client } from '../support/a2a-clients.ts';

const DANA = 'dana-key-0123456789abcdef';
const ERIN = 'erin-key-0123456789abcdef';
const keys = [
  { name: 'dana', key: DANA, scopes: ['chat'] },
  { name: 'erin', key: ERIN, scopes: ['chat'] },
];

const env = useSimulatorAndFolder('agentd-a2a-total-');
const agentFile = (storage: Record<string, unknown>) => ({
  name: 'a2a-total-agent',
  storage,
  server: { ...roomyLimits, auth: { keys } },
  llm: { timeoutMs: 10_000 },
});

/** Every page of the caller's tasks (`pageSize` 2): the ids and each page's `totalSize`. */
async function pages(client: Client, filter: Record<string, unknown> = {}) {
  const ids: string[] = [];
  const sizes: number[] = [];
  let pageToken = '';
  do {
    const page: any = await client.listTasks(listRequest({ pageSize: 2, pageToken, ...filter }));
    ids.push(...page.tasks.map((t: any) => t.id));
    sizes.push(page.totalSize);
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  return { ids, sizes };
}

async function checkTotals(storage: () => Record<string, unknown>): Promise<void> {
  let app: RunningApp = await env.apps.start(agentFile(storage()), { modelUrl: env.sim.url });
  try {
    const dana = await v1Client(app, DANA);
    for (const [i, contextId] of ['t-a', 't-b', 't-a', 't-c', 't-b', 't-a'].entries())
      await send(dana, [text(`[[reply:${contextId} ${i}]]`)], { contextId });
    await send(await v1Client(app, ERIN), [text('[[reply:erin]]')], { contextId: 't-a' }); // erin's own t-a

    const listed = await pages(dana);
    expect(listed.ids).toHaveLength(6);
    expect(listed.sizes).toEqual([6, 6, 6]); // exact on every page, not "this page's end plus one"
    expect((await pages(await v1Client(app, ERIN))).sizes).toEqual([1]);
    // One context alone is exact too; a status filter stays a bound (docs/a2a.md, "ListTasks").
    expect((await pages(dana, { contextId: 't-a' })).sizes).toEqual([3, 3]);
    const done = await pages(dana, { status: TaskState.TASK_STATE_COMPLETED });
    expect(done.ids).toHaveLength(6);
    expect(done.sizes.at(-1)).toBe(6);

    // Deleting a session takes its tasks out of the total.
    const res = await authed(DANA)(`${app.url}/api/sessions/t-a`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect((await pages(dana)).sizes).toEqual([3, 3]);

    // A restart over the same storage answers the same totals, and keeps them from there.
    await env.apps.stop(app);
    app = await env.apps.start(agentFile(storage()), { modelUrl: env.sim.url });
    const again = await v1Client(app, DANA);
    expect((await pages(again)).sizes).toEqual([3, 3]);
    await send(again, [text('[[reply:after the restart]]')], { contextId: 't-d' });
    expect((await pages(again)).sizes).toEqual([4, 4]);
    expect((await pages(await v1Client(app, ERIN))).sizes).toEqual([1]);
  } finally {
    await env.apps.stop(app);
  }
}

describe('A2A ListTasks totalSize', () => {
  it('on JSONL storage: the caller\u2019s task count on every page, dropping with a deleted session, the same after a restart', async () => {
    const dir = join(env.dir, 'jsonl');
    await checkTotals(() => ({ type: 'jsonl', dir }));
  });

  it.skipIf(!hasRedisServer())(
    'on Redis storage: the caller\u2019s task count on every page, dropping with a deleted session, the same after a restart',
    async () => {
      const redis: RedisServer = await startRedis();
      try {
        const keyPrefix = `total${Date.now()}:`;
        await checkTotals(() => ({ type: 'redis', url: redis.url, keyPrefix }));
      } finally {
        await redis.stop();
      }
    },
  );
});
