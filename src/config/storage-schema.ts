/** `storage`: where session logs are kept (jsonl, memory, redis or postgres). */
import { z } from 'zod';
import { positiveInt } from './numbers.ts';
import { LEGACY_STORAGE_DIR } from './storage-dir.ts';

const maxSessionsInMemory = positiveInt(1000).describe(
  'Sessions held in memory at most: the least recently used idle one leaves first (idle ones leave after a minute anyway) and is read back from its log when used again.',
);

const leaseMs = z
  .number()
  .int()
  .min(500)
  .default(10_000)
  .describe(
    'How long a session stays with an instance that stopped renewing its lease (it died) before another takes it over, in ms.',
  );

export const storageSchema = z.discriminatedUnion('type', [
  z
    .strictObject({
      type: z.literal('jsonl'),
      dir: z
        .string()
        .optional()
        // An inline config (no agent file) keeps the old default; loadConfig puts an agent file's own in its place.
        .transform((dir) => dir ?? LEGACY_STORAGE_DIR)
        .describe(
          "The sessions' folder, relative to the agent file's folder. One agentd at a time uses it (a second one exits 1 naming the first). Unset, it is a folder of the agent file's own in the per-user data folder `<data>`: `$XDG_DATA_HOME/agentd`, else `~/.local/share/agentd` (Linux), `~/Library/Application Support/agentd` (macOS), `%LOCALAPPDATA%\\agentd` (Windows); a non-empty `./data/sessions` in the working folder is kept instead, with a warning. Default: `<data>/<file name>-<hash of its path>/sessions`",
        ),
      maxSessionsInMemory,
    })
    .describe("One append-only JSONL file per session; each event is written and fsync'd before its frame goes out."),
  z.strictObject({ type: z.literal('memory'), maxSessionsInMemory }).describe('Nothing is kept across restarts.'),
  z
    .strictObject({
      type: z.literal('redis'),
      url: z
        .url({ protocol: /^rediss?$/ })
        .describe(
          '`redis://` or `rediss://`, e.g. `redis://127.0.0.1:6379` (credentials are redacted in logs and the export).',
        ),
      keyPrefix: z
        .string()
        .default('agentd:')
        .describe(
          'Prefix of every key, so deployments can share one Redis; instances with the same `url` and prefix share sessions.',
        ),
      leaseMs,
      requireDurable: z
        .boolean()
        .default(false)
        .describe(
          'Refuse to start when Redis answers `CONFIG GET` with a setting that can lose acknowledged writes (`appendonly` must be `yes`, `appendfsync` `always`, `maxmemory-policy` `noeviction`); the error names each setting and the value it needs. Off, each such setting is a warning at start. A Redis that refuses `CONFIG GET` (managed services) is a warning either way.',
        ),
      replicas: z
        .number()
        .int()
        .min(0)
        .default(0)
        .describe(
          "Replicas that must hold a write before agentd acknowledges it (Redis `WAIT`): session appends and every record write (outbox, schedules, memory, ledger, leases' claims). 0: the primary's answer is enough (a failover to a replica that lags can lose acknowledged writes).",
        ),
      replicaTimeoutMs: z
        .number()
        .int()
        .min(1)
        .default(2000)
        .describe(
          'How long a write waits for `replicas` replicas, in ms; fewer in time fail it as a store failure (reason `storage`), never acknowledged.',
        ),
      maxSessionsInMemory,
    })
    .describe('One Redis Stream per session; every instance sharing the Redis serves every session (see Scaling out).'),
  z
    .strictObject({
      type: z.literal('postgres'),
      url: z
        .url({ protocol: /^postgres(ql)?$/ })
        .describe(
          '`postgres://user:password@host:5432/database`; TLS as its `sslmode` says (`?sslmode=verify-full&sslrootcert=/path/ca.pem`). The password is redacted in messages, logs and the export.',
        ),
      schema: z
        .string()
        .min(1)
        .max(63)
        .default('public')
        .describe(
          "The schema holding agentd's tables (`agentd_*`); it must exist, agentd makes and migrates the tables in it at start.",
        ),
      pool: positiveInt(10).describe(
        'Connections to the database at most per store: agentd opens two (sessions, records), so up to twice this per instance, plus three for the cluster (one LISTEN connection, two for NOTIFY and its tables).',
      ),
      leaseMs,
      redis: z
        .strictObject({
          url: z
            .url({ protocol: /^rediss?$/ })
            .describe('`redis://` or `rediss://` (credentials are redacted in logs and the export).'),
          keyPrefix: z
            .string()
            .default('agentd:')
            .describe('Prefix of every channel, so deployments can share one Redis.'),
        })
        .optional()
        .describe(
          "A Redis beside PostgreSQL that carries the cluster's live frames only (chunks included; its pub/sub costs nothing for a session nobody watches elsewhere). Sessions, leases, forwarding and records stay in PostgreSQL. Without it, instances on one database form a cluster through LISTEN/NOTIFY alone.",
        ),
      maxSessionsInMemory,
    })
    .describe(
      'The store of record for production: session logs, leases, fencing tokens and feature records in PostgreSQL tables (see [PostgreSQL](postgres.md): durability, backups); every instance on the same `url` and `schema` serves every session (see Scaling out).',
    ),
]);
