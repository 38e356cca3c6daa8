/**
 * Publishing on PostgreSQL: messages coalesced into few NOTIFYs. Contracts:
 * - A transaction that ran NOTIFY takes a database-wide lock at commit, so every NOTIFY serialises with every other
 *   writer's commit. Messages published within `windowMs` (and while the previous batch is in flight) go out together
 *   in ONE statement (one transaction): per channel, their lines packed into payloads under `MAX_PAYLOAD` bytes. An
 *   instance therefore commits at most one NOTIFY transaction per window, whatever the number of appends, chunks or
 *   channels; the session log's appends never NOTIFY.
 * - Batches go out one after another (the next one starts once the previous one committed), so a channel's messages
 *   arrive in the order they were published. Within a batch, a channel's payloads are sent in order.
 * - A message too large for a payload is written to the unlogged table `agentd_cluster_mail` in the same transaction
 *   and travels as `@<id>`; readers fetch it (it is kept a few minutes: `sweepMail`).
 * - `publish` resolves once its batch committed (`undefined`: NOTIFY cannot say who listened), or rejects
 *   SERVICE_UNAVAILABLE `reason: "storage"`.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { AppError, messageOf } from '../../errors/index.ts';
import { qualify, withClient } from './connection.ts';

/** PostgreSQL refuses a payload of 8000 bytes or more; this leaves room for the part line. */
export const MAX_PAYLOAD = 7900;

/** A channel's name on PostgreSQL: a hash of the cluster's name for it (identifiers hold 63 bytes, any key does not). */
export const pgChannelOf = (name: string): string =>
  `agentd_${createHash('sha256').update(name).digest('hex').slice(0, 40)}`;

/** A failure of the database as the cluster's callers see it. */
export const postgresUnavailable = (err: unknown): never => {
  if (err instanceof AppError) throw err;
  const cause = messageOf(err);
  throw new AppError('SERVICE_UNAVAILABLE', `PostgreSQL is unavailable: ${cause}`, { reason: 'storage', cause });
};

interface Pending {
  message: string;
  resolve: (receivers: undefined) => void;
  reject: (err: unknown) => void;
}

/** A channel's messages as payloads: `p<n>` (so two equal parts are not merged by NOTIFY), then one line each. */
function payloadsOf(lines: string[]): string[] {
  const payloads: string[] = [];
  let current: string[] = [];
  let size = 0;
  for (const line of lines) {
    const bytes = Buffer.byteLength(line) + 1;
    if (current.length > 0 && size + bytes > MAX_PAYLOAD) {
      payloads.push([`p${payloads.length}`, ...current].join('\n'));
      current = [];
      size = 0;
    }
    current.push(line);
    size += bytes;
  }
  if (current.length > 0) payloads.push([`p${payloads.length}`, ...current].join('\n'));
  return payloads;
}

const NOTIFY =
  'SELECT count(pg_notify(c, p)) FROM (SELECT c, p FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(c, p, o) ORDER BY o) AS s';

export function notifyBatcher(pool: pg.Pool, schema: string, windowMs: number) {
  const sql = qualify(schema);
  let pending = new Map<string, Pending[]>();
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  /** NOTIFY transactions committed (for tests and the docs' claim). */
  let batches = 0;

  async function send(batch: Map<string, Pending[]>): Promise<void> {
    const all = [...batch.values()].flat();
    try {
      await withClient(pool, async (client) => {
        const channels: string[] = [];
        const payloads: string[] = [];
        const big = all.some((p) => Buffer.byteLength(p.message) >= MAX_PAYLOAD - 16);
        if (big) await client.query('BEGIN');
        for (const [channel, items] of batch) {
          const lines: string[] = [];
          for (const { message } of items) {
            if (Buffer.byteLength(message) < MAX_PAYLOAD - 16) lines.push(message);
            else {
              const text = sql('INSERT INTO @.agentd_cluster_mail (body) VALUES ($1) RETURNING id');
              const { rows } = await client.query<{ id: string }>(text, [message]);
              lines.push(`@${rows[0]!.id}`);
            }
          }
          for (const payload of payloadsOf(lines)) {
            channels.push(channel);
            payloads.push(payload);
          }
        }
        await client.query(NOTIFY, [channels, payloads]);
        if (big) await client.query('COMMIT');
      });
      batches++;
      for (const p of all) p.resolve(undefined);
    } catch (err) {
      for (const p of all) p.reject(err);
    }
  }

  function flush(): void {
    timer = undefined;
    if (inFlight || pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    inFlight = send(batch).finally(() => {
      inFlight = undefined;
      if (pending.size > 0 && !timer) timer = setTimeout(flush, windowMs);
    });
  }

  return {
    publish(channel: string, message: string): Promise<undefined> {
      return new Promise<undefined>((resolve, reject) => {
        const list = pending.get(channel) ?? [];
        list.push({ message, resolve, reject: (err) => reject(toAppError(err)) });
        pending.set(channel, list);
        if (!timer && !inFlight) timer = setTimeout(flush, windowMs);
      });
    },
    /** Deletes mail older than `maxAgeMs` (every instance does, now and then). */
    async sweepMail(maxAgeMs: number): Promise<void> {
      const text = sql("DELETE FROM @.agentd_cluster_mail WHERE at < now() - $1 * interval '1 millisecond'");
      await pool.query(text, [maxAgeMs]);
    },
    batches: () => batches,
    /** Sends what is pending at once and waits for it. */
    async drain(): Promise<void> {
      clearTimeout(timer);
      while (inFlight || pending.size > 0) {
        flush();
        await inFlight;
      }
    },
  };
}

const toAppError = (err: unknown): AppError => {
  try {
    return postgresUnavailable(err);
  } catch (e) {
    return e as AppError;
  }
};
