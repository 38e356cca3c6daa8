/**
 * The webhooks' durable outbox: deliveries by id, and the webhooks added at runtime, on the record store of the
 * sessions' medium (outbox-records.ts). test/unit/outbox-store-contract.ts runs these on every record store engine:
 * - `add` keeps a delivery only when none of its id exists (true then): a fact announced twice (a retry of the
 *   announcement, another instance, a restart) is one delivery. `put` replaces a delivery's state; both are durable
 *   once they resolve, and a store opened later on the same medium answers what was put.
 * - `due(now, limit)` answers pending deliveries whose `nextAttemptAt` is at or before `now`, the earliest due first.
 * - `ofWebhook(id, limit)`: that webhook's deliveries, newest first. `deleteWebhook` removes them with it.
 * - `claim(id, ttlMs)` takes the lease on a delivery for every store on the medium (the record store's `claim`): of
 *   concurrent claims at most one wins, so one instance sends a given attempt.
 * - Fenced (issue 71; the record store's outbox, outbox-records.ts): a claim carries the delivery's version as it
 *   was claimed, and `put` under that claim (`lease`) answers false, writing nothing, when the delivery was written
 *   since (another instance claimed it once this one's claim ran out, this one paused): a stale instance's outcome
 *   never overwrites a newer one.
 * - `due(now, limit, after)` pages: the due deliveries after `after` in the same order (earliest due first, ties by
 *   id), so the dispatcher looks past a page of deliveries whose receivers are busy.
 * - `pending(holder)`: how many pending deliveries count toward `holder` (one count, never a scan).
 * - `add` of a delivery whose holder is at its cap keeps it as `failed` (with a `lastError` that says so), never
 *   pending, and answers true: the fact is recorded, not lost, and not queued.
 */
import type { Lease } from '../store/secret-store.ts';
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

/** The outbox (see the contracts above). */
export interface OutboxStore {
  open(): Promise<void>;
  add(delivery: Delivery): Promise<boolean>;
  put(delivery: Delivery, lease?: DeliveryLease): Promise<boolean>;
  get(id: string): Promise<Delivery | undefined>;
  due(now: number, limit: number, after?: DueCursor): Promise<Delivery[]>;
  pending(holder: string): Promise<number>;
  ofWebhook(webhookId: string, limit: number): Promise<Delivery[]>;
  claim(id: string, ttlMs: number): Promise<DeliveryLease | undefined>;
  webhooks(): Promise<StoredWebhook[]>;
  /** False when a webhook of that id exists. */
  addWebhook(webhook: StoredWebhook): Promise<boolean>;
  /** False when there was none. */
  deleteWebhook(id: string): Promise<boolean>;
  close(): Promise<void>;
}
