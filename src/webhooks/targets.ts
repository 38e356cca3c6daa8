/**
 * The receivers deliveries go to, as the dispatcher sees them (in this process): each its own in-flight limit and its
 * own circuit, so a slow or dead receiver delays only its own deliveries (docs/webhooks.md, "Fair between receivers").
 * Contracts:
 * - A receiver is a webhook (`webhook:<id>`), or one principal's push configs at one origin (`pushTarget`): one
 *   principal's hundred configs on one dead host are one receiver, and two principals never share one.
 * - `admit(key, now, timeoutMs)`: `send` while fewer than `inFlight` attempts of the receiver run (the caller then
 *   calls `settle` once, with the verdict's `probe`); `wait` when it is full (the delivery stays due, attempted once a slot frees); `defer` with the
 *   time to move the delivery to while its circuit is open (the next probe), or while its probe runs (the probe's end).
 * - `settle(key, result, now)`: `answered` (delivered, or any answer but 408, 429 or 5xx) closes the circuit and clears
 *   the failures; `failed` (no answer in time, a network error, 408, 429, 5xx) counts one; `failures` in a row open the
 *   circuit for `probeAfterMs`; then one delivery is attempted (the probe): answered closes it, failed opens it again
 *   for twice as long (at most `maxProbeAfterMs`); `neutral` (nothing was asked of the receiver) changes nothing.
 * - A receiver with nothing in flight, no failure and a closed circuit is forgotten; `sweep` forgets any left idle for
 *   an hour. Circuits are this process's: instances learn a receiver's state each on its own.
 * - `createQueues`: the due deliveries a look found while their receiver was full, up to `max` per receiver and
 *   without their body (each is read again before it is sent), taken in order as the receiver's attempts end.
 */
import type { DeliveriesLimits } from '../config/schema.ts';
import type { Delivery } from './outbox-store.ts';

/** A webhook's receiver, and the holder its pending deliveries count toward. */
export const WEBHOOK_HOLDER = (webhookId: string): string => `webhook:${webhookId}`;
/** The holder of a principal's push notifications (`owner` absent: sessions without one, every anonymous caller). */
export const PUSH_HOLDER = (owner: string | undefined): string => `push:${owner ?? ''}`;
/** The receiver of `owner`'s push notifications to `url`: the principal and the URL's origin. */
export const pushTarget = (owner: string | undefined, url: string): string =>
  `${PUSH_HOLDER(owner)} ${URL.parse(url)?.origin ?? url}`;

export type Verdict =
  | { kind: 'send'; probe: boolean }
  | { kind: 'wait' }
  | { kind: 'defer'; until: number; failures: number; lastError: string | undefined };
export type AttemptResult = 'answered' | 'failed' | 'neutral';

/** What the dispatcher's owner counts (src/metrics). */
export interface DeliveryMetrics {
  refused: { inc(labels: { kind: string }): void };
  circuitsOpened: { inc(): void };
}

interface Receiver {
  inFlight: number;
  failures: number;
  lastError: string | undefined;
  /** Set while the circuit is open: when the next probe may go. */
  openUntil: number | undefined;
  backoff: number;
  /** While the probe runs: when it must have ended. */
  probeUntil: number | undefined;
  lastSeen: number;
}

const IDLE_MS = 3_600_000;

export function createTargets(
  limits: Pick<DeliveriesLimits, 'inFlightPerTarget' | 'circuit'>,
  hooks: {
    opened?: (key: string, r: { failures: number; until: number; lastError: string | undefined }) => void;
    closed?: (key: string) => void;
  } = {},
) {
  const { circuit } = limits;
  const receivers = new Map<string, Receiver>();
  const fresh = (now: number): Receiver => ({
    ...{ inFlight: 0, failures: 0, lastError: undefined, openUntil: undefined },
    ...{ backoff: circuit.probeAfterMs, probeUntil: undefined, lastSeen: now },
  });
  const forget = (key: string, r: Receiver) => {
    if (r.inFlight === 0 && r.failures === 0 && r.openUntil === undefined) receivers.delete(key);
  };
  const open = (key: string, r: Receiver, now: number) => {
    r.openUntil = now + r.backoff;
    hooks.opened?.(key, { failures: r.failures, until: r.openUntil, lastError: r.lastError });
  };

  return {
    admit(key: string, now: number, timeoutMs: number): Verdict {
      let r = receivers.get(key);
      if (!r) receivers.set(key, (r = fresh(now)));
      r.lastSeen = now;
      const defer = (until: number): Verdict => ({
        kind: 'defer',
        until,
        failures: r.failures,
        lastError: r.lastError,
      });
      if (r.openUntil === undefined) {
        if (r.inFlight >= limits.inFlightPerTarget) return { kind: 'wait' };
        r.inFlight++;
        return { kind: 'send', probe: false };
      }
      if (now < r.openUntil) return defer(r.openUntil);
      if (r.probeUntil !== undefined) return defer(Math.max(r.probeUntil, now + 1));
      r.probeUntil = now + timeoutMs;
      r.inFlight++;
      return { kind: 'send', probe: true };
    },
    /** The end of an attempt `admit` sent (`probe`: as its verdict said). */
    settle(key: string, probe: boolean, result: AttemptResult, now: number, error?: string): void {
      const r = receivers.get(key);
      if (!r) return;
      r.inFlight = Math.max(0, r.inFlight - 1);
      r.lastSeen = now;
      const probed = probe && r.probeUntil !== undefined;
      if (result === 'answered') {
        const wasOpen = r.openUntil !== undefined;
        Object.assign(r, { failures: 0, lastError: undefined, openUntil: undefined, probeUntil: undefined });
        r.backoff = circuit.probeAfterMs;
        if (wasOpen) hooks.closed?.(key);
      } else if (result === 'failed') {
        r.failures++;
        r.lastError = error;
        if (probed) {
          r.probeUntil = undefined;
          r.backoff = Math.min(2 * r.backoff, circuit.maxProbeAfterMs);
          open(key, r, now);
        } else if (r.openUntil === undefined && r.failures >= circuit.failures) open(key, r, now);
      } else if (probed) r.probeUntil = undefined; // the next look probes again
      forget(key, r);
    },
    /** Forgets receivers left idle (nothing in flight) for an hour. */
    sweep(now: number): void {
      for (const [key, r] of receivers) if (r.inFlight === 0 && now - r.lastSeen > IDLE_MS) receivers.delete(key);
    },
    /** A receiver's state (tests, logs); undefined when it is not held. */
    state(key: string): { inFlight: number; failures: number; open: boolean } | undefined {
      const r = receivers.get(key);
      return r && { inFlight: r.inFlight, failures: r.failures, open: r.openUntil !== undefined };
    },
  };
}
export type Targets = ReturnType<typeof createTargets>;

/** Due deliveries waiting in this process for a slot of their receiver, by receiver (first found, first taken). */
export function createQueues(max: number) {
  const queues = new Map<string, Delivery[]>();
  return {
    /** Queues `d` for `key`; false (nothing queued) when that receiver's queue is full. */
    push(key: string, d: Delivery): boolean {
      let queue = queues.get(key);
      if (!queue) queues.set(key, (queue = []));
      if (queue.length >= max) return false;
      queue.push({ ...d, body: '' });
      return true;
    },
    shift(key: string): Delivery | undefined {
      const queue = queues.get(key);
      const d = queue?.shift();
      if (queue?.length === 0) queues.delete(key);
      return d;
    },
    clear: () => queues.clear(),
  };
}
