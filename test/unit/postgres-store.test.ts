import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { qualify } from '../../src/store/postgres/connection.ts';
import { createPostgresStore, type PostgresEventStore } from '../../src/store/postgres/event-store.ts';
import { recentStatement } from '../../src/store/postgres/queries.ts';
import { sessionKey } from '../../src/session-id.ts';
import type { RecentQuery } from '../../src/store/types.ts';
import { hasPostgres, startPostgres, type PostgresServer } from '../support/postgres.ts';
import { eventStoreContract, manualClock, user, type ContractSubject } from './store-contract.ts';

const log = pino({ level: 'silent' });
const enabled = hasPostgres();
let server: PostgresServer | undefined;

describe.skipIf(!enabled)('postgres store', () => {
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  const opened: PostgresEventStore<SessionEvent>[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
  });

  /** A store over `schema` (default: a new one, so subjects never see each other's sessions). */
  const open = async (
    schema?: string,
  ): Promise<ContractSubject & { store: PostgresEventStore<SessionEvent>; schema: string }> => {
    const clock = manualClock();
    const name = schema ?? (await server!.freshSchema());
    const store = createPostgresStore<SessionEvent>({
      url: server!.url,
      schema: name,
      pool: 4,
      log,
      clock,
      parseEvent: parseSessionEvent,
    });
    await store.open();
    return { store, clock, schema: name, reopen: async () => (await open(name)).store };
  };
  /** A store closed after the file. */
  const kept = async (schema?: string) => {
    const subject = await open(schema);
    opened.push(subject.store);
    return subject;
  };

  eventStoreContract('postgres', () => open());

  it('two stores on one schema number one log: concurrent appends from both get distinct, consecutive seqs', async () => {
    const a = await kept();
    const b = await kept(a.schema);
    const writes = Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).store.append('s', [user(`${i}`)]));
    const seqs = (await Promise.all(writes)).flat().map((e) => e.seq);
    expect([...seqs].sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect((await a.store.read('s')).map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  /** The rows the scans of `recent(q)`'s statement read on `schema`, and the kinds of scan (EXPLAIN ANALYZE). */
  async function scansOf(schema: string, q: RecentQuery): Promise<{ rows: number; kinds: string[] }> {
    const { text, values } = recentStatement(q);
    const explained = await server!.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${qualify(schema)(text)}`, values);
    const out = { rows: 0, kinds: [] as string[] };
    const walk = (node: Record<string, unknown>) => {
      const kind = node['Node Type'] as string;
      if (kind.endsWith('Scan')) {
        out.rows += (node['Actual Rows'] as number) * (node['Actual Loops'] as number);
        out.kinds.push(kind);
      }
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    walk((explained.rows[0] as { 'QUERY PLAN': [{ Plan: Record<string, unknown> }] })['QUERY PLAN'][0].Plan);
    return out;
  }

  it('a page of recent sessions reads the same few rows at 10 and at 100 000 sessions (an index range, no scan of the table)', async () => {
    const small = await kept();
    for (let i = 0; i < 10; i++) {
      await small.store.append(sessionKey(`o${i % 3}`, `s${i}`), [user('hi')]);
      small.clock.advance(1000);
    }
    const big = await kept();
    const t = qualify(big.schema);
    await server!.query(
      t(`INSERT INTO @.agentd_sessions (session_id, owner, last_seq, updated_at)
         SELECT '\\x00'::bytea || convert_to('o' || (g % 100), 'UTF8') || '\\x00'::bytea || convert_to('s' || g, 'UTF8'),
                'o' || (g % 100), 1, to_char(timestamptz '2025-01-01' + g * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
         FROM generate_series(1, 100000) AS g`),
    );
    await server!.query(t('ANALYZE @.agentd_sessions'));
    const limit = 5;
    const newest = (await big.store.recent({ limit })).sessions;
    expect(newest.map((s) => s.updatedAt)).toEqual([...newest.map((s) => s.updatedAt)].sort().reverse());
    const queries: RecentQuery[] = [
      { limit },
      { limit, owner: 'o1' },
      { limit, after: { id: newest.at(-1)!.id, updatedAt: newest.at(-1)!.updatedAt } },
      { limit, owner: 'o1', after: { id: sessionKey('o1', 's50001'), updatedAt: '2025-01-01T13:53:21.000Z' } },
    ];
    for (const q of queries) {
      const [few, many] = [await scansOf(small.schema, q), await scansOf(big.schema, q)];
      expect(few.rows).toBeLessThanOrEqual(10);
      expect(many.rows, JSON.stringify(q)).toBeLessThanOrEqual(2 * limit + 2);
      expect(
        many.kinds.every((k) => k.startsWith('Index')),
        many.kinds.join(),
      ).toBe(true);
      expect((await big.store.recent(q)).sessions).toHaveLength(limit);
    }
  });
});
