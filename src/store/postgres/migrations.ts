/**
 * agentd's tables on PostgreSQL, brought up to date at start. Contracts:
 * - Migrations only go forward: `MIGRATIONS[i]` takes a schema from version i to i + 1, and is never edited once
 *   released (a change is a new entry).
 * - They run in one transaction under `pg_advisory_xact_lock(LOCK, hashtext(schema))`, so instances starting together
 *   apply each once (the others wait, then find the schema current); the lock goes with the transaction.
 * - `agentd_schema_version` (one row) holds the version. A schema of a newer version than this agentd knows is refused
 *   with a message naming it, never written to.
 * - The schema itself must exist: agentd makes its tables, not the operator's schema.
 */
import type pg from 'pg';
import { AppError } from '../../errors/index.ts';
import { SCHEMA_V1 } from './schema-v1.ts';
import { SCHEMA_V2 } from './schema-v2.ts';
import { SCHEMA_V3 } from './schema-v3.ts';

/** The advisory lock's first key: "agentd" in ASCII, read as a 32-bit number. */
const LOCK = 0x61676e74;

export const MIGRATIONS: readonly string[] = [SCHEMA_V1, SCHEMA_V2, SCHEMA_V3];

/** The version this agentd brings a schema to. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings `schema` (of the database `client` is connected to) to SCHEMA_VERSION; answers the version it found.
 * `where` names the database in messages (the URL without password).
 */
export async function migrate(client: pg.ClientBase, schema: string, where: string): Promise<number> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK, schema]);
    const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (found.rowCount === 0)
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `cannot use PostgreSQL at ${where}: schema "${schema}" does not exist`,
        {
          reason: 'storage',
        },
      );
    await client.query("SELECT set_config('search_path', $1, true)", [quotedPath(client, schema)]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS agentd_schema_version (one boolean PRIMARY KEY DEFAULT true CHECK (one), version integer NOT NULL)',
    );
    const version = Number(
      (await client.query<{ version: number }>('SELECT version FROM agentd_schema_version')).rows[0]?.version ?? 0,
    );
    if (version > SCHEMA_VERSION)
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `cannot use PostgreSQL at ${where}: schema "${schema}" is at version ${version}, newer than this agentd knows (${SCHEMA_VERSION}); run a newer agentd`,
        { reason: 'storage', version, known: SCHEMA_VERSION },
      );
    for (const sql of MIGRATIONS.slice(version)) await client.query(sql);
    if (version < SCHEMA_VERSION)
      await client.query(
        'INSERT INTO agentd_schema_version (version) VALUES ($1) ON CONFLICT (one) DO UPDATE SET version = EXCLUDED.version',
        [SCHEMA_VERSION],
      );
    await client.query('COMMIT');
    return version;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** The schema as a `search_path` value (a quoted identifier). */
const quotedPath = (client: pg.ClientBase, schema: string): string => client.escapeIdentifier(schema);
