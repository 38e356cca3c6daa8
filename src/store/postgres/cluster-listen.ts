/**
 * The cluster's medium on PostgreSQL alone (medium.ts states the contracts): NOTIFY out (postgres-notify.ts: few,
 * coalesced), LISTEN in. Contracts:
 * - One dedicated connection per instance LISTENs (never one of a pool: a pooler in transaction mode would lose it).
 *   It is checked every `PROBE_MS`; when it breaks, `lost` is told, it reconnects (100 ms doubling to 2 s), LISTENs
 *   to every channel again and then tells `back`, so callers read what they missed from the rows: a NOTIFY is a hint,
 *   the tables are the truth.
 * - A payload's lines are delivered in order, and payloads in the order they came; a mail reference (`@<id>`) is read
 *   before the lines after it are delivered.
 * - Channels are hashed into PostgreSQL identifiers (`pgChannelOf`); the listeners hear the cluster's own name.
 * It is src/cluster/medium.ts's `ClusterMedium` (the store does not import the cluster: the type is its shape).
 */
import pg from 'pg';
import { messageOf } from '../../errors/index.ts';
import type { Logger } from '../../log/index.ts';
import { cannotOpen, createPool, qualify, safePostgresUrl } from './connection.ts';
import { notifyBatcher, pgChannelOf } from './cluster-notify.ts';

/** How long published messages wait to be coalesced into one NOTIFY transaction. */
export const NOTIFY_WINDOW_MS = 10;
/** How often the LISTEN connection is checked, and mail older than `MAIL_MS` swept. */
const PROBE_MS = 5000;
const MAIL_MS = 5 * 60_000;

export interface PostgresMediumOptions {
  url: string;
  schema: string;
  log: Logger;
  windowMs?: number;
}

export type Listener = (message: string, channel: string) => void;

/** The medium (src/cluster/medium.ts), its pool (the tables' too) and how many NOTIFY transactions it committed. */
export interface PostgresMedium {
  name: 'postgres';
  reason: 'storage';
  countsListeners: false;
  publish(channel: string, message: string): Promise<undefined>;
  subscribe(channel: string, listener: Listener): Promise<void>;
  unsubscribe(channel: string, listener: Listener): Promise<void>;
  isReady(): boolean;
  watch(on: { lost(): void; back(): void }): () => void;
  open(): Promise<void>;
  close(): Promise<void>;
  pool: pg.Pool;
  batches(): number;
}

type Channels = Map<string, { name: string; listeners: Set<Listener> }>;

/** Delivers payloads in the order they came, a payload's lines in order, mail read before the lines after it. */
function deliverer(channels: Channels, readMail: (id: string) => Promise<string | undefined>, log: Logger) {
  let delivering: Promise<void> = Promise.resolve();
  const hand = (message: string, channel: { name: string; listeners: Set<Listener> }) => {
    for (const listener of [...channel.listeners]) {
      try {
        listener(message, channel.name);
      } catch (err) {
        log.warn({ err: messageOf(err) }, 'cluster: a listener failed');
      }
    }
  };
  return (pgName: string, payload: string): void => {
    delivering = delivering
      .then(async () => {
        for (const line of payload.split('\n').slice(1)) {
          const message = line.startsWith('@') ? await readMail(line.slice(1)).catch(() => undefined) : line;
          const channel = channels.get(pgName);
          if (message !== undefined && channel) hand(message, channel);
        }
      })
      .catch(() => undefined);
  };
}

export function postgresMedium(options: PostgresMediumOptions): PostgresMedium {
  const { url, schema, log } = options;
  const where = safePostgresUrl(url);
  const pool = createPool({ url, schema, pool: 2, log }, 'cluster');
  const notify = notifyBatcher(pool, schema, options.windowMs ?? NOTIFY_WINDOW_MS);
  const channels: Channels = new Map();
  const watchers = new Set<{ lost(): void; back(): void }>();
  let client: pg.Client | undefined;
  let ready = false;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  const listen = (c: pg.Client, pgName: string) => c.query(`LISTEN ${pg.escapeIdentifier(pgName)}`);
  const readMail = async (id: string) =>
    (await pool.query<{ body: string }>(qualify(schema)('SELECT body FROM @.agentd_cluster_mail WHERE id = $1'), [id]))
      .rows[0]?.body;
  const deliver = deliverer(channels, readMail, log);

  async function connect(): Promise<void> {
    const next = new pg.Client({ connectionString: url, application_name: 'agentd-listen', keepAlive: true });
    next.on('notification', (n) => deliver(n.channel, n.payload ?? ''));
    next.on('error', () => dropped(next));
    next.on('end', () => dropped(next));
    await next.connect().catch((err: unknown) => {
      next.end().catch(() => undefined);
      throw err;
    });
    client = next; // from here a subscribe LISTENs on it too
    for (const pgName of channels.keys()) await listen(next, pgName);
    ready = true;
  }

  function dropped(which: pg.Client): void {
    if (closed || which !== client) return;
    client = undefined;
    ready = false;
    which.end().catch(() => undefined);
    log.warn({ postgres: where }, 'cluster: the LISTEN connection broke; reconnecting');
    for (const w of watchers) w.lost();
    void reconnect(0);
  }

  async function reconnect(attempt: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 2000)).unref());
    if (closed) return;
    try {
      await connect();
      log.info({ postgres: where }, 'cluster: the LISTEN connection is back');
      for (const w of watchers) w.back();
    } catch (err) {
      if (attempt === 0) log.warn({ err: messageOf(err), postgres: where }, 'cluster: cannot LISTEN yet; retrying');
      void reconnect(attempt + 1);
    }
  }

  const probe = () => {
    const c = client;
    c?.query('SELECT 1').catch(() => dropped(c));
    notify.sweepMail(MAIL_MS).catch(() => undefined);
  };

  return {
    name: 'postgres',
    reason: 'storage',
    countsListeners: false,
    publish: (channel, message) => notify.publish(pgChannelOf(channel), message),
    async subscribe(channel, listener) {
      const pgName = pgChannelOf(channel);
      const entry = channels.get(pgName) ?? { name: channel, listeners: new Set<Listener>() };
      entry.listeners.add(listener);
      if (channels.has(pgName)) return;
      channels.set(pgName, entry);
      if (client) await listen(client, pgName); // (away: the reconnect LISTENs to it)
    },
    async unsubscribe(channel, listener) {
      const pgName = pgChannelOf(channel);
      const entry = channels.get(pgName);
      if (!entry?.listeners.delete(listener) || entry.listeners.size > 0) return;
      channels.delete(pgName);
      await client?.query(`UNLISTEN ${pg.escapeIdentifier(pgName)}`);
    },
    isReady: () => ready,
    watch(on) {
      watchers.add(on);
      return () => void watchers.delete(on);
    },
    async open() {
      await connect().catch((err: unknown) => {
        throw cannotOpen(where, err);
      });
      timer = setInterval(probe, PROBE_MS);
      timer.unref();
    },
    async close() {
      await notify.drain().catch(() => undefined);
      closed = true;
      clearInterval(timer);
      await client?.end().catch(() => undefined);
      await pool.end();
    },
    pool,
    batches: notify.batches,
  };
}
