/**
 * Sends the outbox's due deliveries, each receiver apart (targets.ts: its own in-flight limit and circuit). Each
 * attempt is claimed first (a lease: on Redis one instance sends a given attempt), read again under the claim (another
 * instance may have sent it meanwhile), attempted, and its next state put before the claim is released: delivered,
 * pending again after the next wait of its retry schedule, or failed once the schedule is spent or the answer is final
 * (`nextState`, pure).
 * Contracts:
 * - A look pages through the due deliveries (earliest first, at most SCAN_MAX) and starts an attempt for each whose
 *   receiver has a free slot; it never waits for an attempt. One whose receiver is full waits in that receiver's queue
 *   in this process (at most QUEUED_MAX; past it, it stays due for a later look) and goes as the receiver's attempts
 *   end; one that ends with its receiver's queue empty wakes the dispatcher. So a receiver that never answers holds
 *   its own slots only, the looks page past its deliveries to everyone else's, and a receiver's backlog drains
 *   without a look per attempt.
 * - While a receiver's circuit is open, each of its due deliveries is moved (under its claim, attempts unchanged) to
 *   the circuit's next probe: out of the due window, so a hundred dead receivers' deliveries do not fill the pages.
 *   One it would hold past its creation plus its retry schedule's waits plus `circuit.maxProbeAfterMs` fails instead,
 *   `lastError` naming the open circuit.
 * - `wake()` looks for due deliveries at once (a new delivery, here); otherwise every `pollMs`, and when a retry or a
 *   probe put here falls due. `stop()` ends the attempts in flight (their outcome is not put: the delivery stays
 *   pending and is sent again, with the same id) and resolves once nothing runs.
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
import type { DeliveriesLimits } from '../config/schema.ts';
import type { Logger } from '../log/index.ts';
import type { UrlPolicy } from '../egress/url-policy.ts';
import type { PushTarget } from './delivery-state.ts';
import type { Delivery, DueCursor, OutboxStore, StoredWebhook } from './outbox-store.ts';
import { createSender, type To } from './sender.ts';
import { createQueues, createTargets, type AttemptResult, type DeliveryMetrics, type Verdict } from './targets.ts';

export { nextState, type PushTarget } from './delivery-state.ts';

/** Due deliveries read per page, and per look at most. */
const PAGE = 200;
const SCAN_MAX = 5_000;
/** Due deliveries held in this process per receiver while it is full (sent as its attempts end, without a look). */
const QUEUED_MAX = 256;

const DEFAULT_LIMITS: Pick<DeliveriesLimits, 'inFlightPerTarget' | 'circuit'> = {
  inFlightPerTarget: 4,
  circuit: { failures: 5, probeAfterMs: 30_000, maxProbeAfterMs: 600_000 },
};

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
  /** Per receiver: attempts in flight and the circuit (default: `server.limits.deliveries`' defaults). */
  limits?: Pick<DeliveriesLimits, 'inFlightPerTarget' | 'circuit'>;
  metrics?: Pick<DeliveryMetrics, 'circuitsOpened'>;
}

/** The dispatcher's timers: wakes `later`, and `every` poll (one at most), all unref'd; `clear` ends them. */
function createTimers(wake: () => void) {
  const timers = new Set<NodeJS.Timeout>();
  let poller: NodeJS.Timeout | undefined;
  return {
    later(ms: number): void {
      const t = setTimeout(() => {
        timers.delete(t);
        wake();
      }, ms);
      t.unref();
      timers.add(t);
    },
    every(ms: number): void {
      if (poller) return;
      poller = setInterval(wake, ms);
      poller.unref();
    },
    clear(): void {
      clearInterval(poller);
      poller = undefined;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}

/** What the receivers' circuits tell: logged, counted, and the probe's time woken at. */
function circuitsTold(deps: DispatcherDeps, later: (ms: number) => void): Parameters<typeof createTargets>[1] {
  const { log, clock } = deps;
  return {
    opened(target, r) {
      deps.metrics?.circuitsOpened.inc();
      log.warn(
        { target, failures: r.failures, probeAt: new Date(r.until).toISOString(), error: r.lastError },
        "delivery receiver's circuit opened: its deliveries wait for the probe",
      );
      later(Math.max(0, r.until - clock.now()));
    },
    closed: (target) => log.info({ target }, "delivery receiver's circuit closed: it answered the probe"),
  };
}

export function createDispatcher(deps: DispatcherDeps) {
  const { outbox, clock, log } = deps;
  const pollMs = deps.pollMs ?? 1_000;
  let stopped = true;
  /** Aborted by `stop()`: ends the attempts in flight. */
  let stopping = new AbortController();
  let looking: Promise<void> | undefined;
  let again = false;
  /** Deliveries being attempted or moved here, and their promises. */
  const busy = new Set<string>();
  const running = new Set<Promise<void>>();
  const timers = createTimers(() => wake());
  const later = (ms: number) => timers.later(ms);
  const limits = deps.limits ?? DEFAULT_LIMITS;
  const targets = createTargets(limits, circuitsTold(deps, later));
  const queues = createQueues(QUEUED_MAX);

  const sender = createSender({
    ...{ outbox, webhook: deps.webhook, policy: deps.policy, clock, log },
    ...(deps.push && { push: deps.push }),
    signal: () => stopping.signal,
    retryAt: (at: number) => later(Math.max(0, at - clock.now())),
    graceMs: limits.circuit.maxProbeAfterMs,
  });

  /** One attempt of `d`, its receiver told how it went (`probe`: as its verdict said; undefined: none was asked). */
  async function send(d: Delivery, to: To, probe: boolean | undefined): Promise<void> {
    let said: { result: AttemptResult; error?: string | undefined } = { result: 'neutral' };
    try {
      said = await sender.send(d, to);
    } finally {
      if (probe !== undefined) targets.settle(to.key, probe, said.result, clock.now(), said.error);
    }
  }

  /** Tracks `work` on `id`; `wakes`: an attempt, whose end frees a slot of its receiver. */
  function run(id: string, work: Promise<void>, then?: () => void): void {
    busy.add(id);
    const tracked = work
      .catch((err: unknown) => log.error({ err, deliveryId: id }, 'webhook send failed'))
      .finally(() => {
        busy.delete(id);
        running.delete(tracked);
        then?.();
      });
    running.add(tracked);
  }

  /** Sends, moves or queues `d` as its receiver allows: what it did (`skip`: it was taken already). */
  function consider(d: Delivery, now: number): Verdict['kind'] | 'skip' {
    if (busy.has(d.id)) return 'skip';
    const to = sender.targetOf(d);
    if (!to.push && !to.hook) return (run(d.id, send(d, to, undefined)), 'send'); // fails without asking anyone
    const verdict = targets.admit(to.key, now, to.timeoutMs);
    if (verdict.kind === 'send') run(d.id, send(d, to, verdict.probe), () => freed(to.key));
    else if (verdict.kind === 'defer') run(d.id, sender.defer(d, to, verdict));
    else if (queues.push(to.key, d)) busy.add(d.id);
    return verdict.kind;
  }

  /** A slot of receiver `key` freed: its next queued delivery goes (those its circuit holds are moved), else a look. */
  function freed(key: string): void {
    for (let d = queues.shift(key); !stopped; d = queues.shift(key)) {
      if (!d) return wake();
      busy.delete(d.id);
      const did = consider(d, clock.now());
      if (did === 'send' || did === 'wait') return;
    }
  }

  async function look(): Promise<void> {
    do {
      again = false;
      await deps.refresh?.();
      const now = clock.now();
      let after: DueCursor | undefined;
      for (let scanned = 0; scanned < SCAN_MAX && !stopped;) {
        const page = await outbox.due(now, PAGE, after);
        for (const d of page) consider(d, now);
        scanned += page.length;
        const last = page.at(-1);
        if (!last || page.length < PAGE) break;
        after = { nextAttemptAt: last.nextAttemptAt, id: last.id };
      }
      targets.sweep(now);
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

  function poll(): void {
    if (!stopped) timers.every(pollMs);
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
      if (stopping.signal.aborted) stopping = new AbortController();
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
      stopping.abort();
      timers.clear();
      queues.clear();
      await looking;
      while (running.size > 0) await Promise.all([...running]);
      busy.clear(); // the queued ones: a later start finds them due again
      await sender.close();
    },
    /** A receiver's state in this process (tests). */
    target: (key: string) => targets.state(key),
  };
}
