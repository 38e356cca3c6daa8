import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { createRedisStore } from '../../src/store/redis-store.ts';
import { sessionKey } from '../../src/session-id.ts';
import { sessionFenceKey } from '../../src/redis/index.ts';
import type { EventStore } from '../../src/store/types.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { PATIENT } from '../support/wait.ts';
import { eventStoreContract, manualClock, user, type ContractSubject } from './store-contract.ts';

const log = pino({ level: 'silent' });
const enabled = hasRedisServer();
let redis: RedisServer | undefined;

describe.skipIf(!enabled)('redis store', () => {
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  /** A store over its own key prefix, so subjects never see each other's sessions. */
  const open = async (keyPrefix = `t${randomUUID()}:`): Promise<ContractSubject> => {
    const clock = manualClock();
    const store = createRedisStore<SessionEvent>({
      url: redis!.url,
      keyPrefix,
      log,
      clock,
      parseEvent: parseSessionEvent,
    });
    await store.open();
    return { store, clock, reopen: async () => (await open(keyPrefix)).store };
  };

  eventStoreContract('redis', () => open());

  it('a second instance over the same Redis reads the same log and continues its seq', async () => {
    const prefix = `shared${randomUUID()}:`;
    const a = await open(prefix);
    const b = await open(prefix);
    try {
      await a.store.append('s', [user('from a')]);
      expect((await b.store.append('s', [user('from b')]))[0]?.seq).toBe(2);
      expect((await a.store.read('s')).map((e) => (e.event as { content: string }).content)).toEqual([
        'from a',
        'from b',
      ]);
    } finally {
      await a.store.close();
      await b.store.close();
    }
  });

  it('pages a store written before the sorted index existed: the index is rebuilt from the hash, and keys it lost are dropped', async () => {
    const prefix = `legacy${randomUUID()}:`;
    const { store } = await open(prefix);
    const raw = createClient({ url: redis!.url });
    await raw.connect();
    try {
      for (const key of ['a', 'b', 'c', 'd']) await store.append(key, [user(key)]);
      await raw.del(`${prefix}session-keys`); // as an older agentd left it: the hash alone
      expect((await store.list({ limit: 2 })).map((s) => s.id)).toEqual(['a', 'b']);
      expect(await raw.zCard(`${prefix}session-keys`)).toBe(4);
      // An older instance deletes a session and creates one (the hash alone): the sizes still match.
      await raw.hDel(`${prefix}sessions`, 'b');
      await raw.hSet(`${prefix}sessions`, 'e', '1 2025-01-02T03:04:05.678Z');
      expect((await store.list({ after: 'a', limit: 2 })).map((s) => s.id)).toEqual(['c', 'd']); // b dropped, the page filled from further on
      expect((await store.list({ after: 'd', limit: 2 })).map((s) => s.id)).toEqual(['e']); // sizes differed: rebuilt
      expect((await store.list()).map((s) => s.id)).toEqual(['a', 'c', 'd', 'e']);
    } finally {
      await raw.close();
      await store.close();
    }
  });

  it('lists by recency a store written before that index existed (rebuilt from the hash), and mends what an older agentd wrote since', async () => {
    const prefix = `recent${randomUUID()}:`;
    const { store, clock } = await open(prefix);
    const raw = createClient({ url: redis!.url });
    await raw.connect();
    const recent = async (owner?: string) =>
      (await store.recent({ ...(owner !== undefined && { owner }), limit: 10 })).sessions.map((s) => s.id);
    try {
      const alice = sessionKey('alice', 'x');
      for (const key of ['a', 'b', alice, 'c']) {
        clock.advance(1000);
        await store.append(key, [user(key)]);
      }
      await raw.del([`${prefix}recent`, `${prefix}recent-by-owner`]); // as an older agentd left it: the hash alone
      expect(await recent()).toEqual(['c', alice, 'b', 'a']);
      expect(await store.recent({ owner: 'alice', limit: 10 })).toMatchObject({ sessions: [{ id: alice }], total: 1 });
      expect(await raw.zCard(`${prefix}recent`)).toBe(4);
      // An older agentd appends to `a` (a later time) and deletes `b` (the hash alone; sizes differ: rebuilt) …
      await raw.hSet(`${prefix}sessions`, 'a', '2 2025-01-02T03:05:00.000Z');
      await raw.hDel(`${prefix}sessions`, 'b');
      expect(await recent('')).toEqual(['a', 'c']);
      // … or appends to `c`, with the sizes still matching: the page moves it when it meets it.
      await raw.hSet(`${prefix}sessions`, 'c', '2 2025-01-02T03:06:00.000Z');
      expect(await recent()).toEqual(['a', alice]); // `c` was met where it had been, after the page's start
      expect(await recent()).toEqual(['c', 'a', alice]);
    } finally {
      await raw.close();
      await store.close();
    }
  });

  it('indexes the turns of a stream written before turn indexes existed, and what an older agentd appended since, when first read', async () => {
    const prefix = `turns${randomUUID()}:`;
    const { store } = await open(prefix);
    const raw = createClient({ url: redis!.url });
    await raw.connect();
    try {
      await store.append('s', [user('a', 'ta'), user('b', 'tb'), user('c', 'ta')]);
      await raw.del([`${prefix}{s:s}:turns`, `${prefix}{s:s}:turn-order`]); // as an older agentd left it: the stream alone
      expect((await store.readTurn('s', 'ta')).map((e) => e.seq)).toEqual([1, 3]);
      // An older agentd appends (the stream alone); the next append here leaves the index as it is, a read catches up.
      await raw.xAdd(`${prefix}{s:s}:ev`, '0-4', {
        ts: '2025-01-02T03:04:05.678Z',
        e: JSON.stringify(user('d', 'tc')),
      });
      await store.append('s', [user('e', 'tb')]);
      expect(await store.turns('s')).toEqual([
        { turnId: 'ta', firstSeq: 1, lastSeq: 3 },
        { turnId: 'tb', firstSeq: 2, lastSeq: 5 },
        { turnId: 'tc', firstSeq: 4, lastSeq: 4 },
      ]);
      await store.append('s', [user('f', 'tc')]);
      expect((await store.readTurn('s', 'tc')).map((e) => e.seq)).toEqual([4, 6]);
    } finally {
      await raw.close();
      await store.close();
    }
  });

  it('counts the turns of a store written before turn totals were kept once, logged (a backfill that indexes lagging streams), and recounts a stream an older agentd appended to', async () => {
    const prefix = `totals${randomUUID()}:`;
    const { store } = await open(prefix);
    const raw = createClient({ url: redis!.url });
    await raw.connect();
    const lines: { msg: string; sessions?: number }[] = [];
    const logged = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as never) });
    const reopened = () =>
      createRedisStore<SessionEvent>({
        url: redis!.url,
        keyPrefix: prefix,
        log: logged,
        parseEvent: parseSessionEvent,
      });
    const later = [reopened(), reopened()];
    const alice = sessionKey('alice', 'x');
    const bob = sessionKey('bob', 'z');
    try {
      await store.append(alice, [user('1', 't1'), user('2', 't2'), user('3', 't1')]);
      await store.append(bob, [user('1', 't1')]);
      await store.append('plain', [user('1', 't1')]);
      // As an older agentd left it: no kept totals, and one stream without a turn index.
      await raw.del([
        `${prefix}turn-counts`,
        `${prefix}turn-totals`,
        `${prefix}{s:${bob}}:turns`,
        `${prefix}{s:${bob}}:turn-order`,
      ]);
      const [first, second] = later as [EventStore<SessionEvent>, EventStore<SessionEvent>];
      await first.open();
      expect(
        await Promise.all([first.turnTotal(), first.turnTotal('alice'), first.turnTotal('bob'), first.turnTotal('')]),
      ).toEqual([4, 2, 1, 1]);
      const backfills = () => lines.filter((l) => l.msg.includes('counted the turns')).length;
      expect(lines.find((l) => l.msg.includes('counted the turns'))?.sessions).toBe(3);
      expect(await first.turnTotal('alice')).toBe(2);
      expect(backfills()).toBe(1); // once: every session is counted from here
      // An older agentd appends to alice's session (the stream alone, a new turn); the next append here uncounts
      // the session (its index lags), and the next total counts it again.
      await raw.xAdd(`${prefix}{s:${alice}}:ev`, '0-4', {
        ts: '2025-01-02T03:04:05.678Z',
        e: JSON.stringify(user('4', 't3')),
      });
      await raw.hSet(`${prefix}sessions`, alice, '4 2025-01-02T03:04:05.678Z');
      await first.append(alice, [user('5', 't4')]);
      await second.open();
      expect(await second.turnTotal('alice')).toBe(4);
      expect(await second.turnTotal()).toBe(6);
      // A read that brings a counted session's index up to date counts it again at once.
      await raw.xAdd(`${prefix}{s:${bob}}:ev`, '0-2', {
        ts: '2025-01-02T03:04:05.678Z',
        e: JSON.stringify(user('2', 't2')),
      });
      await raw.hSet(`${prefix}sessions`, bob, '2 2025-01-02T03:04:05.678Z');
      expect(await second.turns(bob)).toHaveLength(2);
      expect(await Promise.all([second.turnTotal('bob'), second.turnTotal()])).toEqual([2, 7]);
    } finally {
      await raw.close();
      await store.close();
      await Promise.all(later.map((s) => s.close()));
    }
  });

  it("refuses, writing nothing, an append whose fencing token is not the session's latest (issue 71)", async () => {
    const keyPrefix = `fence${randomUUID()}:`;
    const { store } = await open(keyPrefix);
    const raw = createClient({ url: redis!.url });
    await raw.connect();
    const fence = sessionFenceKey(keyPrefix, 's');
    try {
      await raw.set(fence, '7'); // the lease this writer took
      expect((await store.append('s', [user('one')], 7))[0]?.seq).toBe(1);
      await raw.set(fence, '8'); // another instance took the session since
      await expect(store.append('s', [user('stale')], 7)).rejects.toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        details: { reason: 'fenced' },
      });
      expect((await store.read('s')).map((e) => e.seq)).toEqual([1]);
      expect(await store.turns('s')).toHaveLength(1);
      expect((await store.append('s', [user('two')], 8))[0]?.seq).toBe(2); // the new holder writes on
      expect((await store.append('s', [user('unfenced')]))[0]?.seq).toBe(3); // a write without a token is not checked
      await store.delete('s');
      expect(await raw.exists(fence)).toBe(0); // the token goes with the log
      await expect(store.append('s', [user('after delete')], 8)).rejects.toMatchObject({
        details: { reason: 'fenced' },
      });
    } finally {
      await raw.quit();
      await store.close();
    }
  });

  it('fails fast while Redis is gone, tells its watcher of the loss and of the return, and works again at once', async () => {
    const own = await startRedis();
    const store = createRedisStore<SessionEvent>({ url: own.url, keyPrefix: 'f:', log, parseEvent: parseSessionEvent });
    const medium: string[] = [];
    store.watchMedium?.({ lost: () => medium.push('lost'), back: () => medium.push('recovered') });
    await store.open();
    try {
      await store.append('s', [user('before')]);
      await own.stop();
      await expect.poll(() => medium, PATIENT).toEqual(['lost']);
      await expect(store.append('s', [user('lost')])).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      const back = await startRedis(Number(new URL(own.url).port));
      try {
        await expect.poll(() => medium, PATIENT).toEqual(['lost', 'recovered']);
        // Recovered means reachable: the next append is stored, with no retry.
        expect((await store.append('s', [user('after')]))[0]?.seq).toBe(1); // this Redis keeps nothing on disk
      } finally {
        await back.stop();
      }
    } finally {
      await store.close();
    }
  });

  it('names an unreachable Redis at open, without its password', async () => {
    const store = createRedisStore<SessionEvent>({
      url: 'redis://user:hunter2@127.0.0.1:1',
      keyPrefix: 'x:',
      log,
      parseEvent: parseSessionEvent,
    });
    const err = await store.open().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
    expect(err?.message).not.toContain('hunter2');
    await store.close();
  });
});
