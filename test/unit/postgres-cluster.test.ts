/**
 * What a cluster on PostgreSQL alone rests on: the global tail never passes over a row committed out of order; a
 * burst of publishes costs few NOTIFYs (counted on a LISTEN connection of the test's own), delivered whole and in
 * order, a message too large for a payload included; the LISTEN connection, when the server ends it, comes back and
 * listens again.
 */
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { postgresMedium, type PostgresMedium } from '../../src/store/postgres/cluster-listen.ts';
import { pgChannelOf } from '../../src/store/postgres/cluster-notify.ts';
import { createPostgresStore, type PostgresEventStore } from '../../src/store/postgres/event-store.ts';
import { TAIL_START } from '../../src/store/postgres/event-tail.ts';
import { hasPostgres, startPostgres, type PostgresServer } from '../support/postgres.ts';
import { until } from '../support/wait.ts';
import { user } from './store-contract.ts';

const log = pino({ level: 'silent' });
const enabled = hasPostgres();
let server: PostgresServer | undefined;
const closing: (() => Promise<unknown>)[] = [];

async function storeOn(schema: string): Promise<PostgresEventStore<SessionEvent>> {
  const store = createPostgresStore<SessionEvent>({
    url: server!.url,
    schema,
    pool: 2,
    log,
    parseEvent: parseSessionEvent,
  });
  closing.push(() => store.close());
  await store.open(); // makes the tables
  return store;
}

async function mediumOn(schema: string): Promise<PostgresMedium> {
  const medium = postgresMedium({ url: server!.url, schema, log });
  closing.push(() => medium.close());
  await medium.open();
  return medium;
}

/** A connection of the test's own: runs SQL, holds a transaction, or counts the NOTIFYs of a channel. */
async function connection(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: server!.url });
  closing.push(() => c.end());
  await c.connect();
  return c;
}

/** Appends `content` to session `id` in `c`'s current transaction, as the store's one statement does. */
const appendIn = (c: pg.Client, schema: string, id: string, content: string) =>
  c.query(`SELECT ${schema}.agentd_append($1, '', NULL, 'ts', $2, $3, $4)`, [
    Buffer.from(id),
    ['userMessage'],
    ['t1'],
    [JSON.stringify(user(content))],
  ]);

describe.skipIf(!enabled)('postgres: what the cluster rests on', () => {
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close().catch(() => undefined);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('the global tail does not pass over a row whose transaction began first and committed last', async () => {
    const schema = await server!.freshSchema();
    const store = await storeOn(schema);
    await store.append('before', [user('committed before')]);
    // Both sessions and their turn exist before: the appends below add no session and no turn, so they touch no
    // shared counter row (agentd_totals, by random shard), which would make the second wait for the first's commit.
    await store.append('early', [user('early seeded')]);
    await store.append('late', [user('late seeded')]);
    const [early, late] = [await connection(), await connection()];
    await early.query('BEGIN');
    await appendIn(early, schema, 'early', 'began first'); // its transaction id is the older one
    await late.query('BEGIN');
    await appendIn(late, schema, 'late', 'began second');
    await late.query('COMMIT'); // committed first

    const first = await store.tail(TAIL_START, 100);
    const contents = (read: typeof first) => read.events.map((e) => (e.event as { content: string }).content);
    // Only what is below the oldest running transaction: the row committed before, not the late one yet.
    expect(contents(first)).toEqual(['committed before', 'early seeded', 'late seeded']);
    await early.query('COMMIT');
    const next = await store.tail(first.next, 100);
    expect(contents(next)).toEqual(['began first', 'began second']); // in transaction order, none skipped
    expect(next.events.map((e) => e.sessionId)).toEqual(['early', 'late']);
    expect(contents(await store.tail(next.next, 100))).toEqual([]);
  });

  it('a burst of publishes costs a few NOTIFYs, every message arriving once, in order, a large one too', async () => {
    const schema = await server!.freshSchema();
    await storeOn(schema);
    const [sender, receiver] = [await mediumOn(schema), await mediumOn(schema)];
    const heard: Record<string, string[]> = { one: [], two: [] };
    for (const name of ['one', 'two'] as const) await receiver.subscribe(name, (m) => heard[name]!.push(m));
    const counter = await connection();
    let notifies = 0;
    counter.on('notification', () => notifies++);
    for (const name of ['one', 'two']) await counter.query(`LISTEN ${pgChannelOf(name)}`);

    const large = JSON.stringify({ text: 'x'.repeat(20_000) }); // over a payload's 8000 bytes: it goes by mail
    const sent = Array.from({ length: 300 }, (_, i) => JSON.stringify({ n: i, pad: 'y'.repeat(40) }));
    sent.splice(150, 0, large);
    const batchesBefore = sender.batches();
    await Promise.all(sent.map((m, i) => sender.publish(i % 2 === 0 ? 'one' : 'two', m)));
    await until(() => heard.one!.length + heard.two!.length === sent.length, 'every message arrives');

    expect(heard.one).toEqual(sent.filter((_, i) => i % 2 === 0));
    expect(heard.two).toEqual(sent.filter((_, i) => i % 2 === 1));
    // 301 messages of ~60 bytes: a handful of payloads of under 8000 bytes, in one or two transactions.
    expect(sender.batches() - batchesBefore).toBeLessThanOrEqual(2);
    expect(notifies).toBeLessThanOrEqual(8);
  });

  it('listens again after the server ended its LISTEN connection, and says so', async () => {
    const schema = await server!.freshSchema();
    await storeOn(schema);
    const [sender, receiver] = [await mediumOn(schema), await mediumOn(schema)];
    const heard: string[] = [];
    const events: string[] = [];
    receiver.watch({ lost: () => events.push('lost'), back: () => events.push('back') });
    await receiver.subscribe('ch', (m) => heard.push(m));
    await sender.publish('ch', '{"n":1}');
    await until(() => heard.length === 1, 'the first message arrives');

    const admin = await connection();
    await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'agentd-listen'",
    );
    await until(() => events.includes('back'), 'the LISTEN connection is back');
    expect(events).toEqual(['lost', 'back']);
    expect(receiver.isReady()).toBe(true);
    await sender.publish('ch', '{"n":2}');
    await until(() => heard.length === 2, 'a message after the reconnect arrives');
    expect(heard).toEqual(['{"n":1}', '{"n":2}']);
  });
});
