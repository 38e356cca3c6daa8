/**
 * The PostgreSQL engines' connections: one `pg` pool per store, the URL without its password for every message, and
 * how a failure reads. Every statement is parameterised; the one name put into SQL text is the schema, quoted as an
 * identifier (`qualify`).
 */
import { createRequire } from 'node:module';
import type pg from 'pg';
import { AppError, isAppError, messageOf } from '../../errors/index.ts';
import type { Logger } from '../../log/index.ts';

/**
 * The `pg` module, loaded on first use (CommonJS, as the Redis client is): an agentd whose storage is not PostgreSQL
 * never loads it (about 3 MB of heap when idle).
 */
let pgModule: typeof pg | undefined;
const loadPg = (): typeof pg => (pgModule ??= createRequire(import.meta.url)('pg') as typeof pg);

/** What the engines take of `storage: { type: postgres }`. */
export interface PostgresOptions {
  url: string;
  /** The schema holding agentd's tables (it must exist; default `public`). */
  schema: string;
  /** Connections per store at most. */
  pool: number;
  log: Logger;
}

/** The URL without its password (user, host, port, database and parameters kept), for messages and logs. */
export function safePostgresUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '(invalid URL)';
  }
}

/**
 * A pool over `url`: TLS as the URL's `sslmode` says (pg's reading of it), at most `size` connections. An idle
 * connection that breaks is logged and dropped (the pool makes a new one on demand), never thrown.
 */
export function createPool(options: PostgresOptions, what: string): pg.Pool {
  const pool = new (loadPg().Pool)({
    connectionString: options.url,
    max: options.pool,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    application_name: 'agentd',
  });
  pool.on('error', (err) =>
    options.log.warn({ err: messageOf(err), postgres: safePostgresUrl(options.url) }, `${what}: a connection broke`),
  );
  return pool;
}

/**
 * Runs `use` on a connection taken from `pool` (rejecting as `pool.connect` does). While taken, a connection the
 * server breaks reports on the connection itself, where no pool listens: its error is caught here (`use`'s statement
 * rejects with it anyway), and the broken connection is discarded rather than given back.
 */
export async function withClient<T>(pool: pg.Pool, use: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => void (broken ??= err);
  client.on('error', onError);
  try {
    return await use(client);
  } catch (err) {
    broken ??= err instanceof Error ? err : new Error(messageOf(err));
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/** `<schema>.` for SQL text: every `@.` of `text` becomes the quoted schema and a dot. */
export const qualify =
  (schema: string) =>
  (text: string): string =>
    text.replaceAll('@.', `${loadPg().escapeIdentifier(schema)}.`);

/** SQLSTATE classes of a server that cannot serve now: connection (08), resources (53), operator (57), system (58). */
const UNAVAILABLE = /^(08|53|57|58)/;

/** Whether `err` says the database could not be reached or could not serve (rather than refusing a statement). */
export function isOutage(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code !== 'string' || UNAVAILABLE.test(code) || /^E[A-Z]+$/.test(code);
}

/**
 * How a store on Postgres fails a call (`what`: the store as users read it): an AppError passes as it is; an outage
 * is logged (`<what>: <op> failed`, the URL without password) and rejects as SERVICE_UNAVAILABLE `reason: "storage"`;
 * any other refusal of the database is a bug here: INTERNAL_ERROR with its SQLSTATE.
 */
export const postgresFailure =
  (log: Logger, where: string, what: string) =>
  (op: string) =>
  (err: unknown): never => {
    if (isAppError(err)) throw err;
    const cause = messageOf(err);
    log.error({ err: cause, postgres: where }, `${what}: ${op} failed`);
    if (!isOutage(err))
      throw new AppError('INTERNAL_ERROR', `The ${what} (PostgreSQL) refused ${op}: ${cause}`, {
        sqlstate: (err as { code?: string }).code,
      });
    throw new AppError('SERVICE_UNAVAILABLE', `The ${what} (PostgreSQL) is unavailable: ${cause}`, {
      reason: 'storage',
      cause,
    });
  };

/** What stops agentd at start: the database at `where` cannot be used, and why (a wrong URL, a password, no database). */
export const cannotOpen = (where: string, err: unknown): AppError =>
  new AppError('SERVICE_UNAVAILABLE', `cannot use PostgreSQL at ${where}: ${messageOf(err)}`, {
    reason: 'storage',
    ...(typeof (err as { code?: unknown }).code === 'string' && { sqlstate: (err as { code: string }).code }),
  });
