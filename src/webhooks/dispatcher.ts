/**
 * Sends the outbox's due deliveries. Each one is claimed first (a lease for its attempt: on Redis one instance sends
 * a given attempt), read again under the claim (another instance may have sent it meanwhile), attempted, and its
 * next state put before the claim is released: delivered, pending again after the next wait of its webhook's retry
 * schedule, or failed once the schedule is spent or the answer is final (`nextState`, pure).
 * Contracts:
 * - `wake()` looks for due deliveries at once (a new delivery, here); otherwise every `pollMs`, and when a retry
 *   put here falls due. Nothing runs after `stop()` resolved.
 * - It polls only once there is something to look for: `start(true)` (webhooks exist, or another instance may add
 *   deliveries), `poll()`, the first `wake()`, or a pending delivery found at start; until then no timer runs.
 * - A delivery whose webhook is gone fails with `lastError: "webhook removed"`.
 * - An attempt's outcome is put under its claim: when this instance was paused past the claim and another claimed the
 *   delivery since, the outcome is dropped (outbox-store.ts, fenced), never written over the newer one's.
 * - A delivery the push target owns (an A2A push notification, src/a2a-face/push) is sent as the request the target
 *   builds for it at the attempt, with the target's timeout and retry schedule; when it builds none (the config was
 *   deleted) the delivery fails with `lastError: "push config removed"`.
 */
import type { Clock } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import type { UrlPolicy } from '../egress/url-policy.ts';
import { createAttempts, type AttemptOutcome, type AttemptRequest } from './attempt.ts';
import type { Delivery, OutboxStore, StoredWebhook } from './outbox-store.ts';

/** Deliveries attempted per look at most. */
const BATCH = 16;
/** What a claim adds to the attempt's timeout. */
const CLAIM_MARGIN_MS = 5_000;

/** A delivery after an attempt at `now` with `outcome`. */
export function nextState(d: Delivery, outcome: AttemptOutcome, schedule: readonly number[], now: number): Delivery {
  const attempts = d.attempts + 1;
  const { lastError: _lastError, lastStatusCode: _lastStatusCode, ...rest } = d;
  const code = outcome.statusCode === undefined ? {} : { lastStatusCode: outcome.statusCode };
  if (outcome.delivered) return { ...rest, ...code, attempts, status: 'delivered', deliveredAt: now };
  const wait = outcome.retry ? schedule[attempts - 1] : undefined;
  const failed = { ...rest, ...code, attempts, lastError: outcome.error };
  return wait === undefined ? { ...failed, status: 'failed' } : { ...failed, nextAttemptAt: now + wait };
}

/** Deliveries of another kind than webhooks', sent by the dispatcher (A2A push notifications). */
export interface PushTarget {
  owns(d: Delivery): boolean;
  retryScheduleMs: readonly number[];
  timeoutMs: number;
  /** The attempt's request at `at`, or undefined when what it was for is gone. */
  request(d: Delivery, at: number): Promise<AttemptRequest | undefined>;
}

/** The push target as the webhook service also asks it: the notifications of each stored fact. */
export interface PushAnnouncer extends PushTarget {
  /** Keeps the notifications of a stored frame (`agent.<event>`, its data, stored at `ts`); true when one was added. */
  announce(name: string, payload: unknown, ts: number): Promise<boolean>;
}

const gone = (error: string): AttemptOutcome => ({ delivered: false, retry: false, error });

export interface DispatcherDeps {
  outbox: OutboxStore;
  webhook: (id: string) => StoredWebhook | undefined;
  /** Called before each look (runtime webhooks added by another instance). */
  refresh?: () => Promise<void>;
  /** Asked for each delivery whether it owns it (read at each send: it may be wired after the dispatcher). */
  push?: () => PushTarget | undefined;
  policy: UrlPolicy;
  clock: Clock;
  log: Logger;
  pollMs?: number;
}

export function createDispatcher(deps: DispatcherDeps) {
  const { outbox, clock, log } = deps;
  const pollMs = deps.pollMs ?? 1_000;
  /** The attempts' HTTP clients, kept between attempts (keep-alive to each receiver). */
  const attempts = createAttempts();
  let stopped = true;
  let looking: Promise<void> | undefined;
  let again = false;
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number) => {
    const t = setTimeout(() => {
      timers.delete(t);
      wake();
    }, ms);
    t.unref();
    timers.add(t);
  };

  /** Where `d` goes: the push target, or its webhook (undefined when removed). */
  function targetOf(d: Delivery) {
    const push = deps.push?.();
    if (push?.owns(d)) return { push, timeoutMs: push.timeoutMs, schedule: push.retryScheduleMs };
    const hook = deps.webhook(d.webhookId);
    return { hook, timeoutMs: hook?.timeoutMs ?? 0, schedule: hook?.retryScheduleMs ?? [] };
  }

  async function attempt(d: Delivery, to: ReturnType<typeof targetOf>, now: number): Promise<AttemptOutcome> {
    if (to.push) {
      const request = await to.push.request(d, now);
      return request
        ? attempts.attemptRequest(request, to.timeoutMs, deps.policy, undefined)
        : gone('push config removed');
    }
    return to.hook ? attempts.attemptDelivery(to.hook, d, now, deps.policy) : gone('webhook removed');
  }

  async function send(d: Delivery): Promise<void> {
    const to = targetOf(d);
    const lease = await outbox.claim(d.id, to.timeoutMs + CLAIM_MARGIN_MS);
    if (!lease) return;
    try {
      const now = clock.now();
      const fresh = await outbox.get(d.id);
      if (!fresh || fresh.status !== 'pending' || fresh.nextAttemptAt > now) return;
      const next = nextState(fresh, await attempt(fresh, to, now), to.schedule, clock.now());
      const fields = { deliveryId: d.id, webhookId: d.webhookId, type: d.type, attempts: next.attempts };
      if (!(await outbox.put(next, lease)))
        return log.warn(fields, 'webhook delivery claimed by another instance meanwhile: this outcome is dropped');
      if (next.status === 'delivered') log.info(fields, 'webhook delivered');
      else if (next.status === 'failed') log.warn({ ...fields, error: next.lastError }, 'webhook delivery given up');
      else {
        log.info({ ...fields, error: next.lastError, nextAttemptAt: next.nextAttemptAt }, 'webhook delivery retried');
        later(Math.max(0, next.nextAttemptAt - clock.now()));
      }
    } finally {
      await lease.release().catch(() => undefined);
    }
  }

  async function look(): Promise<void> {
    do {
      again = false;
      await deps.refresh?.();
      const due = await outbox.due(clock.now(), BATCH);
      await Promise.all(
        due.map((d) => send(d).catch((err: unknown) => log.error({ err, deliveryId: d.id }, 'webhook send failed'))),
      );
      again ||= due.length === BATCH;
    } while (again && !stopped);
  }

  function wake(): void {
    if (stopped) return;
    if (looking) {
      again = true;
      return;
    }
    looking = look()
      .catch((err: unknown) => log.error({ err }, 'webhook outbox: could not read due deliveries'))
      .finally(() => (looking = undefined));
  }

  let poller: NodeJS.Timeout | undefined;
  function poll(): void {
    if (stopped || poller) return;
    poller = setInterval(wake, pollMs);
    poller.unref();
  }
  return {
    wake(): void {
      poll();
      wake();
    },
    poll,
    /** `busy`: poll from the start. */
    start(busy: boolean): void {
      stopped = false;
      if (busy) poll();
      wake();
      // A delivery left pending by an earlier run (retried later) needs the poll.
      outbox
        .due(Number.MAX_SAFE_INTEGER, 1)
        .then((pending) => pending.length > 0 && poll())
        .catch((err: unknown) => log.error({ err }, 'webhook outbox: could not read pending deliveries'));
    },
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(poller);
      poller = undefined;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await looking;
      await attempts.close();
    },
  };
}
