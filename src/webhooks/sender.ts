/**
 * The dispatcher's work on one delivery (dispatcher.ts says when): where it goes (`targetOf`), one attempt under its
 * claim with its next state put under that claim (`send`), or, while its receiver's circuit is open, moving it to the
 * probe, unattempted, or failing it once the probe is past its retry schedule's span and a grace (`defer`). Both read the delivery again under the claim
 * and do nothing when it is no longer pending and due (another instance took it meanwhile).
 * - `send` answers what the attempt said of the receiver (targets.ts' `AttemptResult`); an attempt ended by `signal`
 *   (the dispatcher stopping) puts nothing: the delivery stays as it was, and is sent again later with the same id.
 * - An outcome `put` refuses (this instance was paused past its claim, another claimed the delivery since) is dropped.
 */
import type { Clock } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import type { UrlPolicy } from '../egress/url-policy.ts';
import { createAttempts, type AttemptOutcome } from './attempt.ts';
import { gone, nextState, resultOf, type PushTarget } from './delivery-state.ts';
import type { Delivery, DeliveryLease, OutboxStore, StoredWebhook } from './outbox-store.ts';
import { WEBHOOK_HOLDER, type AttemptResult, type Verdict } from './targets.ts';

/** What a claim adds to the attempt's timeout. */
const CLAIM_MARGIN_MS = 5_000;

/** Where a delivery goes: its receiver's key, and the push target or its webhook (neither: the webhook is gone). */
export interface To {
  key: string;
  push?: PushTarget;
  hook?: StoredWebhook | undefined;
  timeoutMs: number;
  schedule: readonly number[];
}

export interface SenderDeps {
  outbox: OutboxStore;
  webhook: (id: string) => StoredWebhook | undefined;
  push?: () => PushTarget | undefined;
  policy: UrlPolicy;
  clock: Clock;
  log: Logger;
  /** Aborted when the dispatcher stops. */
  signal: () => AbortSignal;
  /** Told when a delivery put back pending falls due again. */
  retryAt: (at: number) => void;
  /** How long past its retry schedule's span a circuit may hold a delivery before it fails (`maxProbeAfterMs`). */
  graceMs: number;
}

export function createSender(deps: SenderDeps) {
  const { outbox, clock, log } = deps;
  /** The attempts' HTTP clients, kept between attempts (keep-alive to each receiver). */
  const attempts = createAttempts();

  function targetOf(d: Delivery): To {
    const push = deps.push?.();
    if (push?.owns(d))
      return {
        key: d.target ?? `push:${d.webhookId}`,
        push,
        timeoutMs: push.timeoutMs,
        schedule: push.retryScheduleMs,
      };
    const hook = deps.webhook(d.webhookId);
    const key = d.target ?? WEBHOOK_HOLDER(d.webhookId);
    return { key, hook, timeoutMs: hook?.timeoutMs ?? 0, schedule: hook?.retryScheduleMs ?? [] };
  }

  async function attempt(d: Delivery, to: To, now: number): Promise<AttemptOutcome> {
    const signal = deps.signal();
    if (to.push) {
      const request = await to.push.request(d, now);
      return request
        ? attempts.attemptRequest(request, to.timeoutMs, deps.policy, undefined, signal)
        : gone('push config removed');
    }
    return to.hook ? attempts.attemptDelivery(to.hook, d, now, deps.policy, signal) : gone('webhook removed');
  }

  /** Runs `work` on the fresh delivery under its claim, when it is still pending and due. */
  async function underClaim(
    d: Delivery,
    ttlMs: number,
    work: (fresh: Delivery, lease: DeliveryLease) => Promise<void>,
  ) {
    const lease = await outbox.claim(d.id, ttlMs);
    if (!lease) return;
    try {
      const fresh = await outbox.get(d.id);
      if (fresh && fresh.status === 'pending' && fresh.nextAttemptAt <= clock.now()) await work(fresh, lease);
    } finally {
      await lease.release().catch(() => undefined);
    }
  }

  /** One attempt of `d`: what it said of the receiver. */
  async function send(d: Delivery, to: To): Promise<{ result: AttemptResult; error?: string | undefined }> {
    let said: { result: AttemptResult; error?: string | undefined } = { result: 'neutral' };
    await underClaim(d, to.timeoutMs + CLAIM_MARGIN_MS, async (fresh, lease) => {
      const outcome = await attempt(fresh, to, clock.now());
      if (deps.signal().aborted) return; // stopped meanwhile: nothing put, the delivery is sent again later
      said = { result: resultOf(outcome), error: outcome.delivered ? undefined : outcome.error };
      const next = nextState(fresh, outcome, to.schedule, clock.now());
      const fields = { deliveryId: d.id, webhookId: d.webhookId, type: d.type, attempts: next.attempts };
      if (!(await outbox.put(next, lease)))
        return log.warn(fields, 'webhook delivery claimed by another instance meanwhile: this outcome is dropped');
      if (next.status === 'delivered') log.info(fields, 'webhook delivered');
      else if (next.status === 'failed') log.warn({ ...fields, error: next.lastError }, 'webhook delivery given up');
      else {
        log.info({ ...fields, error: next.lastError, nextAttemptAt: next.nextAttemptAt }, 'webhook delivery retried');
        deps.retryAt(next.nextAttemptAt);
      }
    });
    return said;
  }

  /**
   * Moves `d` to `until` (its receiver's circuit is open), or fails it when that is past its retry schedule's span
   * (from its creation) and `graceMs`: a dead receiver's deliveries do not wait for ever.
   */
  async function defer(d: Delivery, to: To, v: Extract<Verdict, { kind: 'defer' }>): Promise<void> {
    await underClaim(d, CLAIM_MARGIN_MS, async (fresh, lease) => {
      const giveUpAt = fresh.createdAt + to.schedule.reduce((sum, wait) => sum + wait, 0) + deps.graceMs;
      if (v.until <= giveUpAt) {
        await outbox.put({ ...fresh, nextAttemptAt: v.until }, lease);
        return;
      }
      const lastError = `receiver unavailable: its circuit is open after ${v.failures} failed attempts in a row (last: ${v.lastError ?? 'none'}) and the retry schedule is spent`;
      if (await outbox.put({ ...fresh, status: 'failed', lastError }, lease))
        log.warn(
          { deliveryId: d.id, webhookId: d.webhookId, target: to.key },
          'webhook delivery given up: circuit open',
        );
    });
  }

  return { targetOf, send, defer, close: () => attempts.close() };
}
