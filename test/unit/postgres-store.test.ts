import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { createPostgresStore, type PostgresEventStore } from '../../src/store/postgres/event-store.ts';
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
});
