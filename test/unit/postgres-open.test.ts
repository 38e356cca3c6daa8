/**
 * Opening the PostgreSQL store: migrations at start (instances starting together, a newer schema refused) and what
 * an operator reads when the database cannot be used (the URL named, its password never).
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSessionEvent, type SessionEvent } from '../../src/conversation/session-events.ts';
import { createPool, withClient } from '../../src/store/postgres/connection.ts';
import { createPostgresStore } from '../../src/store/postgres/event-store.ts';
import { SCHEMA_VERSION } from '../../src/store/postgres/migrations.ts';
import { hasPostgres, startPostgres, type PostgresServer } from '../support/postgres.ts';
import { user } from './store-contract.ts';

const log = pino({ level: 'silent' });
const enabled = hasPostgres();
let server: PostgresServer | undefined;

const storeAt = (url: string, schema = 'public') =>
  createPostgresStore<SessionEvent>({ url, schema, pool: 2, log, parseEvent: parseSessionEvent });

describe.skipIf(!enabled)('postgres store: opening', () => {
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('instances opening one new schema together migrate it once and share one store', async () => {
    const schema = await server!.freshSchema();
    const stores = Array.from({ length: 6 }, () => storeAt(server!.url, schema));
    try {
      await Promise.all(stores.map((s) => s.open()));
      const ids = await Promise.all(stores.map((s) => s.storeId()));
      expect(new Set(ids).size).toBe(1);
      await stores[0]!.append('s', [user('one')]);
      expect((await stores[5]!.read('s')).map((e) => e.seq)).toEqual([1]);
      const version = await server!.query(`SELECT version FROM ${schema}.agentd_schema_version`);
      expect(version.rows).toEqual([{ version: SCHEMA_VERSION }]);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('a connection the server ends while the store holds it is discarded, its error never thrown at the process', async () => {
    const pool = createPool({ url: server!.url, schema: 'public', pool: 1, log }, 'test');
    try {
      await withClient(pool, async (client) => {
        const { pid } = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!;
        const ended = new Promise((resolve) => client.once('end', resolve));
        await server!.query('SELECT pg_terminate_backend($1)', [pid]); // as a restart of Postgres does
        await ended;
      });
      // The pool's one connection was the broken one: a new one serves the next statement.
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
    }
  });

  it('refuses a schema of a newer version, naming it, and writes nothing there', async () => {
    const schema = await server!.freshSchema();
    const first = storeAt(server!.url, schema);
    await first.open();
    await first.close();
    await server!.query(`UPDATE ${schema}.agentd_schema_version SET version = ${SCHEMA_VERSION + 1}`);
    const later = storeAt(server!.url, schema);
    await expect(later.open()).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.stringMatching(
        new RegExp(`schema "${schema}" is at version ${SCHEMA_VERSION + 1}, newer than this agentd knows`),
      ) as unknown,
    });
    await later.close();
    const version = await server!.query(`SELECT version FROM ${schema}.agentd_schema_version`);
    expect(version.rows).toEqual([{ version: SCHEMA_VERSION + 1 }]);
  });

  it('a missing schema, a missing database, a refused password and a closed port each stop the open naming the URL without its password', async () => {
    const wrongPassword = server!.url.replace(server!.password, 'not-the-password');
    const cases: [url: string, schema: string, says: RegExp][] = [
      [server!.url, 'nowhere', /schema "nowhere" does not exist/],
      [server!.urlOf('nodb'), 'public', /database "nodb" does not exist/],
      [wrongPassword, 'public', /password authentication failed/],
      [`postgres://postgres:secret-pw@127.0.0.1:1/postgres`, 'public', /ECONNREFUSED/],
    ];
    for (const [url, schema, says] of cases) {
      const store = storeAt(url, schema);
      const err = (await store.open().catch((e: unknown) => e)) as Error;
      await store.close();
      expect(err).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { reason: 'storage' } });
      expect(err.message).toMatch(says);
      expect(err.message).toContain(`cannot use PostgreSQL at postgres://postgres:***@127.0.0.1:`);
      for (const secret of [server!.password, 'not-the-password', 'secret-pw'])
        expect(err.message).not.toContain(secret);
    }
  });
});
