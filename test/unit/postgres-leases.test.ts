/**
 * Leases and fencing on the PostgreSQL store's session rows: races between stores on one schema (each its own pool,
 * as separate instances are), judged by the database's clock.
 */
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { createPostgresStore, type PostgresEventStore } from '../../src/store/postgres/event-store.ts';
import { hasPostgres, startPostgres, type PostgresServer } from '../support/postgres.ts';
import { PATIENT } from '../support/wait.ts';
import { user } from './store-contract.ts';

const log = pino({ level: 'silent' });
const enabled = hasPostgres();
let server: PostgresServer | undefined;
const opened: PostgresEventStore<SessionEvent>[] = [];

/** `n` stores over one new schema, as `n` instances sharing a database. */
async function instances(n: number, schema?: string): Promise<PostgresEventStore<SessionEvent>[]> {
  const name = schema ?? (await server!.freshSchema());
  return Promise.all(
    Array.from({ length: n }, async () => {
      const store = createPostgresStore<SessionEvent>({
        url: server!.url,
        schema: name,
        pool: 2,
        log,
        parseEvent: parseSessionEvent,
      });
      opened.push(store);
      await store.open();
      return store;
    }),
  );
}

const texts = async (store: PostgresEventStore<SessionEvent>, id: string) =>
  (await store.read(id)).map((e) => (e.event as { content: string }).content);

describe.skipIf(!enabled)('postgres leases and fencing', () => {
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('of concurrent claims on a free lease exactly one takes it; every claimer learns the holder and its token', async () => {
    const stores = await instances(8);
    const ids = Array.from({ length: 20 }, (_, i) => [`new${i}`, `old${i}`]).flat();
    for (const id of ids.filter((id) => id.startsWith('old'))) await stores[0]!.append(id, [user('no lease yet')]);
    const all = await Promise.all(
      ids.map((id) => Promise.all(stores.map((s, i) => s.claimLease(id, `i${i}`, 30_000)))),
    );
    for (const [n, id] of ids.entries()) {
      const claims = all[n]!;
      const winners = claims.filter((c) => c.taken);
      expect(winners).toHaveLength(1);
      const [winner] = winners;
      for (const c of claims) expect(c).toMatchObject({ token: winner!.token, holder: winner!.holder });
      expect(await stores[0]!.leaseHolder(id)).toBe(winner!.holder);
      expect(winner!.until!.getTime() - winner!.now.getTime()).toBe(30_000); // the database's clock
    }
  });

  it("a stale holder's append is refused atomically (reason fenced, nothing written); the new holder's goes on", async () => {
    const [a, b] = (await instances(2)) as [PostgresEventStore<SessionEvent>, PostgresEventStore<SessionEvent>];
    const first = await a.claimLease('s', 'a', 1);
    await a.append('s', [user('a1')], first.token);
    // A stops renewing: once its lease has run out by the database's clock, B takes the session.
    const second = await vi.waitFor(async () => {
      const claim = await b.claimLease('s', 'b', 30_000);
      if (!claim.taken) throw new Error('the lease is still held');
      return claim;
    }, PATIENT);
    expect(second.token).toBeGreaterThan(first.token);
    await expect(a.append('s', [user('stale'), user('stale 2')], first.token)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      details: { reason: 'fenced' },
    });
    expect((await b.append('s', [user('b1')], second.token)).map((e) => e.seq)).toEqual([2]);
    expect(await texts(a, 's')).toEqual(['a1', 'b1']);
    expect((await a.list()).map((s) => s.lastSeq)).toEqual([2]);
  });

  it("appends racing a takeover: each of the old holder's commits before it or is refused; no seq is used twice", async () => {
    const [a, b] = (await instances(2)) as [PostgresEventStore<SessionEvent>, PostgresEventStore<SessionEvent>];
    const { token } = await a.claimLease('s', 'a', 1);
    const writes = Array.from({ length: 30 }, (_, i) =>
      a.append(`s`, [user(`a${i}`)], token).then(
        (stored) => stored[0]!.seq,
        (err: { details?: { reason?: string } }) => err.details?.reason,
      ),
    );
    const taken = await vi.waitFor(async () => {
      const claim = await b.claimLease('s', 'b', 30_000);
      if (!claim.taken) throw new Error('the lease is still held');
      return claim;
    }, PATIENT);
    const afterTakeover = await b.append('s', [user('b')], taken.token);
    const outcomes = await Promise.all(writes);
    const committed = outcomes.filter((o): o is number => typeof o === 'number');
    expect(outcomes.filter((o) => typeof o !== 'number').every((o) => o === 'fenced')).toBe(true);
    expect(committed.every((seq) => seq < afterTakeover[0]!.seq)).toBe(true);
    const log = await a.read('s');
    expect(log.map((e) => e.seq)).toEqual(Array.from({ length: log.length }, (_, i) => i + 1));
    expect(log.at(-1)!.event).toEqual(user('b'));
  });

  it('a renewal keeps the token; a lapsed lease taken back by its holder with the token it held keeps it too', async () => {
    const [a, b] = (await instances(2)) as [PostgresEventStore<SessionEvent>, PostgresEventStore<SessionEvent>];
    const first = await a.claimLease('s', 'a', 30_000);
    const renewed = await a.claimLease('s', 'a', 30_000, first.token);
    expect(renewed).toMatchObject({ holder: 'a', taken: false, token: first.token });
    expect((await b.claimLease('s', 'b', 30_000)).taken).toBe(false);
    const short = await a.claimLease('s', 'a', 1, first.token);
    expect(short.token).toBe(first.token);
    // Its own claim before the lease ran out would renew it (for 30 s): wait until the database's clock passed it.
    await vi.waitFor(async () => expect(await a.leaseHolder('s')).toBeUndefined(), PATIENT);
    const back = await vi.waitFor(async () => {
      const claim = await a.claimLease('s', 'a', 30_000, first.token);
      if (!claim.taken) throw new Error('the lease has not run out yet');
      return claim;
    }, PATIENT);
    expect(back.token).toBe(first.token); // nobody took it meanwhile: A's writes stay valid
    await a.append('s', [user('still mine')], first.token);
  });

  it('release frees only the holder’s own lease with its token', async () => {
    const [a, b] = (await instances(2)) as [PostgresEventStore<SessionEvent>, PostgresEventStore<SessionEvent>];
    const { token } = await a.claimLease('s', 'a', 30_000);
    expect(await b.releaseLease('s', 'b', token)).toBe(false);
    expect(await a.releaseLease('s', 'a', token + 1)).toBe(false);
    expect(await a.leaseHolder('s')).toBe('a');
    expect(await a.releaseLease('s', 'a', token)).toBe(true);
    expect(await a.leaseHolder('s')).toBeUndefined();
    const next = await b.claimLease('s', 'b', 30_000);
    expect(next).toMatchObject({ holder: 'b', taken: true });
    expect(next.token).toBeGreaterThan(token);
  });

  it('tokens only grow, across deletes and restarts; a deleted session refuses the token it had', async () => {
    const [a] = (await instances(1)) as [PostgresEventStore<SessionEvent>];
    const schema = await server!.freshSchema();
    const [s1] = (await instances(1, schema)) as [PostgresEventStore<SessionEvent>];
    const t1 = (await s1.claimLease('s', 'x', 30_000)).token;
    await s1.append('s', [user('1')], t1);
    expect(await s1.delete('s')).toBe(true);
    await expect(s1.append('s', [user('after delete')], t1)).rejects.toMatchObject({ details: { reason: 'fenced' } });
    const t2 = (await s1.claimLease('s', 'x', 30_000, t1)).token;
    expect(t2).toBeGreaterThan(t1);
    await s1.close();
    const [s2] = (await instances(1, schema)) as [PostgresEventStore<SessionEvent>];
    await s2.delete('s');
    expect((await s2.claimLease('s', 'x', 30_000)).token).toBeGreaterThan(t2);
    expect(await a.read('s')).toEqual([]); // another schema, another medium
  });
});
