/**
 * The webhooks' durable outbox: deliveries by id, and the webhooks added at runtime, on the sessions' medium
 * (`memory`: nothing durable; `jsonl`: `<dir>/.agentd-outbox.jsonl` beside the session logs; `redis`: keys under
 * `<keyPrefix>outbox:`, shared by every instance). test/unit/outbox-store-contract.ts runs these on every engine:
 * - `add` keeps a delivery only when none of its id exists (true then): a fact announced twice (a retry of the
 *   announcement, another instance, a restart) is one delivery. `put` replaces a delivery's state; both are durable
 *   once they resolve, and a store opened later on the same medium answers what was put.
 * - `due(now, limit)` answers pending deliveries whose `nextAttemptAt` is at or before `now`, the earliest due first.
 * - `ofWebhook(id, limit)`: that webhook's deliveries, newest first. `deleteWebhook` removes them with it.
 * - `claim(id, ttlMs)` takes the lease on a delivery for every store on the medium (see secret-store.ts' `claim`): of
 *   concurrent claims at most one wins, so one instance sends a given attempt.
 * - Fenced (issue 71; the record store's outbox, outbox-records.ts): a claim carries the delivery's version as it
 *   was claimed, and `put` under that claim (`lease`) answers false, writing nothing, when the delivery was written
 *   since (another instance claimed it once this one's claim ran out, this one paused): a stale instance's outcome
 *   never overwrites a newer one. The earlier engines, kept to be taken over, keep no versions and answer true.
 */
import { createMemorySecretStore, type Lease } from '../store/secret-store.ts';
import type { WebhookConfig } from '../config/schema.ts';
import type { DeliveryRecord } from './messages.ts';

/**
 * A delivery as kept: its record's fields in epoch ms, the body every attempt sends, and what it is (`kind`): a
 * webhook's (absent in deliveries kept before kinds came: those are a webhook's unless their `webhookId` starts with
 * `a2a-push/`) or an A2A push notification's.
 */
export interface Delivery extends Omit<DeliveryRecord, 'createdAt' | 'nextAttemptAt' | 'deliveredAt'> {
  kind?: 'webhook' | 'a2a-push';
  createdAt: number;
  nextAttemptAt: number;
  deliveredAt?: number;
  /** What every attempt sends; emptied once the delivery finished (the record store's outbox). */
  body: string;
  /**
   * Its receiver (`webhook:<id>`, or `push:<principal>` and the config URL's origin): the deliveries of one receiver
   * share its queue, in-flight limit and circuit (dispatcher.ts). Absent in deliveries kept before receivers came.
   */
  target?: string;
  /** Whose pending deliveries it counts toward (`webhook:<id>`, `push:<principal>`), capped in the record outbox. */
  holder?: string;
}

/** Where a page of due deliveries ended: the next page answers those after it in the same order. */
export interface DueCursor {
  nextAttemptAt: number;
  id: string;
}

/** A claim of a delivery: its lease, and the delivery's version when it was claimed, where the store keeps one. */
export interface DeliveryLease extends Lease {
  version?: number | undefined;
}

/** A webhook added at runtime (its secret included: the store is as private as the session logs). */
export type StoredWebhook = WebhookConfig & { id: string };

/** What every engine keeps, the earlier ones (taken over at the first open, outbox-jsonl.ts, outbox-redis.ts) too. */
export interface EarlierOutbox {
  open(): Promise<void>;
  add(delivery: Delivery): Promise<boolean>;
  put(delivery: Delivery, lease?: DeliveryLease): Promise<boolean>;
  get(id: string): Promise<Delivery | undefined>;
  due(now: number, limit: number): Promise<Delivery[]>;
  ofWebhook(webhookId: string, limit: number): Promise<Delivery[]>;
  claim(id: string, ttlMs: number): Promise<DeliveryLease | undefined>;
  webhooks(): Promise<StoredWebhook[]>;
  /** False when a webhook of that id exists. */
  addWebhook(webhook: StoredWebhook): Promise<boolean>;
  /** False when there was none. */
  deleteWebhook(id: string): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The outbox agentd sends from (the record store's, outbox-records.ts), beyond the earlier engines:
 * - `due(now, limit, after)` pages: the due deliveries after `after` in the same order (earliest due first, ties by
 *   id), so the dispatcher looks past a page of deliveries whose receivers are busy.
 * - `pending(holder)`: how many pending deliveries count toward `holder` (one count, never a scan).
 * - `add` of a delivery whose holder is at its cap keeps it as `failed` (with a `lastError` that says so), never
 *   pending, and answers true: the fact is recorded, not lost, and not queued.
 */
export interface OutboxStore extends EarlierOutbox {
  due(now: number, limit: number, after?: DueCursor): Promise<Delivery[]>;
  pending(holder: string): Promise<number>;
}

/** What the in-memory engine holds (and the JSONL engine replays into). */
export function createOutboxState() {
  const deliveries = new Map<string, Delivery>();
  const hooks = new Map<string, StoredWebhook>();
  return {
    deliveries,
    hooks,
    apply(line: OutboxLine): void {
      if (line.kind === 'delivery') deliveries.set(line.delivery.id, line.delivery);
      else if (line.kind === 'webhook') hooks.set(line.webhook.id, line.webhook);
      else {
        hooks.delete(line.id);
        for (const [id, d] of deliveries) if (d.webhookId === line.id) deliveries.delete(id);
      }
    },
    due: (now: number, limit: number): Delivery[] =>
      [...deliveries.values()]
        .filter((d) => d.status === 'pending' && d.nextAttemptAt <= now)
        .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt)
        .slice(0, limit),
    ofWebhook: (webhookId: string, limit: number): Delivery[] =>
      [...deliveries.values()]
        .filter((d) => d.webhookId === webhookId)
        .sort((a, b) => b.createdAt - a.createdAt)
        .slice(0, limit),
  };
}

/** One change of the outbox, as the JSONL engine writes it. */
export type OutboxLine =
  | { kind: 'delivery'; delivery: Delivery }
  | { kind: 'webhook'; webhook: StoredWebhook }
  | { kind: 'webhookDeleted'; id: string };

/**
 * The engine over an outbox state: `write` makes a change durable before it applies (memory: nothing to write).
 * Deliveries are copied in and out, so a caller's object is never the stored one.
 */
export function outboxOverState(
  state: ReturnType<typeof createOutboxState>,
  write: (line: OutboxLine) => Promise<void>,
  hooks: { open?: () => Promise<void>; close?: () => Promise<void> } = {},
): EarlierOutbox {
  const leases = createMemorySecretStore();
  const change = async (line: OutboxLine) => {
    await write(line);
    state.apply(line);
  };
  const copy = (d: Delivery): Delivery => ({ ...d });
  /** Ids being added (the write in flight), so a concurrent `add` of the same id answers false. */
  const adding = new Set<string>();
  return {
    open: async () => hooks.open?.(),
    async add(delivery) {
      if (state.deliveries.has(delivery.id) || adding.has(delivery.id)) return false;
      adding.add(delivery.id);
      try {
        await change({ kind: 'delivery', delivery: copy(delivery) });
      } finally {
        adding.delete(delivery.id);
      }
      return true;
    },
    put: async (delivery) => (await change({ kind: 'delivery', delivery: copy(delivery) }), true),
    get: (id) => Promise.resolve(state.deliveries.has(id) ? copy(state.deliveries.get(id) as Delivery) : undefined),
    due: (now, limit) => Promise.resolve(state.due(now, limit).map(copy)),
    ofWebhook: (webhookId, limit) => Promise.resolve(state.ofWebhook(webhookId, limit).map(copy)),
    claim: (id, ttlMs) => leases.claim(leaseKey(id), ttlMs),
    webhooks: () => Promise.resolve([...state.hooks.values()]),
    async addWebhook(webhook) {
      if (state.hooks.has(webhook.id)) return false;
      await change({ kind: 'webhook', webhook });
      return true;
    },
    async deleteWebhook(id) {
      if (!state.hooks.has(id)) return false;
      await change({ kind: 'webhookDeleted', id });
      return true;
    },
    close: async () => hooks.close?.(),
  };
}

/** A delivery id as a lease key (`[A-Za-z0-9_-]`). */
export const leaseKey = (id: string): string => id.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 128);

export function createMemoryOutbox(): EarlierOutbox {
  return outboxOverState(createOutboxState(), () => Promise.resolve());
}
