/**
 * The outbox on the record store (src/store/records), the sessions' medium: deliveries as records of `outbox.delivery`
 * (indexed by due time while pending, by webhook and creation time, and by holder while pending), runtime webhooks as
 * records of `outbox.webhook`, the attempt leases as the store's leases. Its JSONL engine group-commits: the deliveries
 * a turn's reactions keep at once share one append and one sync. It passes test/unit/outbox-store-contract.ts on every
 * engine.
 * - A finished delivery (delivered or failed) is kept without its body, and expires `keepFinishedMs` after it
 *   finished (default a week): the store drops it from every read and index then, and the JSONL file sheds it at its
 *   next online compaction, so the file follows what is kept, not how long agentd ran.
 * - Caps (`cap(holder)`): `add` counts the holder's pending deliveries (one count of an index group); at the cap the
 *   delivery is kept as `failed` with a `lastError` naming the limit, logged and told to `onRefused`. Concurrent adds
 *   may pass the cap by the few in flight.
 * - The record store is opened and closed by its owner (createApp), not here.
 */
import { z } from 'zod';
import type { Logger } from '../log/index.ts';
import { records } from '../store/index.ts';
import type { Delivery, OutboxStore, StoredWebhook } from './outbox-store.ts';

const DELIVERIES = 'outbox.delivery';
const WEBHOOKS = 'outbox.webhook';
/** How long delivered and failed deliveries stay listed (`GET /api/webhooks/{id}/deliveries`). */
const KEEP_FINISHED_MS = 7 * 24 * 3_600_000;
const PAGE = 500;

const deliveryIndexes = (d: Delivery): records.IndexEntry[] => [
  ...(d.status === 'pending' ? [{ index: 'due', group: 'pending', score: d.nextAttemptAt }] : []),
  ...(d.status === 'pending' && d.holder !== undefined ? [{ index: 'holder', group: d.holder, score: 0 }] : []),
  { index: 'webhook', group: d.webhookId, score: d.createdAt },
];

/** A holder's cap: how many of its deliveries may be pending, and the setting that says so (named in `lastError`). */
export interface PendingCap {
  max: number;
  setting: string;
}

export interface RecordOutboxDeps {
  records: records.RecordStore;
  log: Logger;
  keepFinishedMs?: number;
  /** The cap on a holder's pending deliveries (none: uncapped). */
  cap?: (holder: string) => PendingCap | undefined;
  /** Told of each delivery kept as failed because its holder was at its cap. */
  onRefused?: (d: Delivery) => void;
}

export function createRecordOutbox(deps: RecordOutboxDeps): OutboxStore {
  const { log } = deps;
  const keep = deps.keepFinishedMs ?? KEEP_FINISHED_MS;
  // Deliveries and webhooks are checked where they are made (the service); read back as they were put.
  const deliveries = records.collection(deps.records, {
    ns: DELIVERIES,
    schema: z.custom<Delivery>((v) => typeof v === 'object' && v !== null),
    indexes: deliveryIndexes,
    log,
  });
  const hooks = records.collection(deps.records, {
    ns: WEBHOOKS,
    schema: z.custom<StoredWebhook>((v) => typeof v === 'object' && v !== null),
    indexes: () => [{ index: 'all', group: 'all', score: 0 }],
    log,
  });
  const expiry = (d: Delivery) =>
    d.status === 'pending' ? {} : { expiresAt: (d.deliveredAt ?? d.nextAttemptAt ?? d.createdAt) + keep };
  /** A finished delivery is kept without its body (nothing sends it again). */
  const kept = (d: Delivery): Delivery => (d.status === 'pending' || d.body === '' ? d : { ...d, body: '' });
  const putWrite = (d: Delivery, ifVersion?: number) =>
    deliveries.writes.put(d.id, kept(d), { ...expiry(d), ...(ifVersion !== undefined && { ifVersion }) });

  /** Keeps `d` pending, or failed when its holder is at its cap (logged, told). */
  async function add(d: Delivery): Promise<boolean> {
    const cap = d.status === 'pending' && d.holder !== undefined ? deps.cap?.(d.holder) : undefined;
    const pending = cap && d.holder !== undefined ? await deliveries.count('holder', d.holder) : 0;
    if (!cap || pending < cap.max) return deps.records.commit([putWrite(d, 0)]);
    const lastError = `not queued: ${pending} deliveries of ${d.holder} were pending, the most ${cap.setting} allows`;
    const refused: Delivery = { ...d, status: 'failed', lastError };
    if (!(await deps.records.commit([putWrite(refused, 0)]))) return false;
    log.warn(
      { deliveryId: d.id, webhookId: d.webhookId, holder: d.holder, pending, limit: cap.max },
      'delivery not queued: its holder is at its cap of pending deliveries',
    );
    deps.onRefused?.(refused);
    return true;
  }

  /** Every record of a query, a page at a time. */
  async function all<T>(
    c: records.Collection<T>,
    q: Omit<records.RecordQuery, 'ns' | 'after' | 'limit'>,
  ): Promise<records.Item<T>[]> {
    const found: records.Item<T>[] = [];
    for (let after: { score: number; id: string } | undefined; ;) {
      const page = await c.query({ ...q, limit: PAGE, ...(after && { after }) });
      found.push(...page);
      const last = page.at(-1);
      if (page.length < PAGE || !last) return found;
      after = { score: q.index === 'webhook' ? (last.value as Delivery).createdAt : 0, id: last.id };
    }
  }

  return {
    open: () => Promise.resolve(),
    add,
    put: (d, lease) => deps.records.commit([putWrite(d, lease?.version)]),
    get: async (id) => (await deliveries.get(id))?.value,
    due: async (now, limit, after) =>
      (
        await deliveries.query({
          ...{ index: 'due', group: 'pending', max: now, limit },
          ...(after && { after: { score: after.nextAttemptAt, id: after.id } }),
        })
      ).map((i) => i.value),
    pending: (holder) => deliveries.count('holder', holder),
    ofWebhook: async (webhookId, limit) =>
      (await deliveries.query({ index: 'webhook', group: webhookId, reverse: true, limit })).map((i) => i.value),
    async claim(id, ttlMs) {
      const lease = await deps.records.claim(DELIVERIES, id, ttlMs);
      return lease && { release: () => lease.release(), version: await deps.records.version(DELIVERIES, id) };
    },
    webhooks: async () => (await all(hooks, { index: 'all', group: 'all' })).map((i) => i.value),
    addWebhook: (webhook) => hooks.put(webhook.id, webhook, { ifVersion: 0 }),
    async deleteWebhook(id) {
      for (;;) {
        const hook = await hooks.get(id);
        if (!hook) return false;
        const own = await all(deliveries, { index: 'webhook', group: id });
        const writes = [
          hooks.writes.delete(id, { ifVersion: hook.version }),
          ...own.map((d) => deliveries.writes.delete(d.id)),
        ];
        if (await deps.records.commit(writes)) return true;
      }
    },
    close: () => Promise.resolve(),
  };
}
