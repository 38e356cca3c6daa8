/**
 * What an instance does when its store lost data (issue 84; store-lost.ts judges the evidence).
 *
 * Contracts:
 * - It looks: the store's identity is checked every `intervalMs` (0: never; memory and JSONL cannot go back), at once
 *   when the medium is back after an outage (`suspect`), and at once with the evidence a refused write or a lease
 *   brings (`noticed`). Checks never overlap; evidence arriving during one is judged by the next; evidence seen
 *   under an identity since replaced is ignored (that loss was handled).
 * - A loss (the identity gone or changed, or evidence that renews it) is handled once per new identity: health is
 *   degraded (`storage: the store lost data (<cause>)`), every session leaves memory (read back at its next use),
 *   every caller still waiting for a turn is answered SERVICE_UNAVAILABLE `reason: "storage"`, the new identity is
 *   adopted (`adopted`: new connections' `hello`, a `storeChanged` frame to open ones), then an error-level log line
 *   names what was lost as far as this instance knows (the sessions it held, the seqs of each now gone) and
 *   `agentd_store_data_lost_total` counts it. A turn left unended in a log that still exists is ended there, under
 *   the new identity, as failed (SERVICE_UNAVAILABLE, `reason: "storage"`) with the fencing token it ran under.
 * - Recovered once the sessions left memory and the checks found the store moving forward under its new identity for
 *   `holdMs`: health is ready again (an info line says so).
 */
import type { Clock } from '../clock.ts';
import { lastSeqOf, type HeldSession } from '../agent/index.ts';
import { messageOf } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import { evidenceOf, judgeLoss, seenUnder, type Loss, type LossEvidence } from '../store/index.ts';
import type { EventStore, StoreEvent } from '../store/types.ts';

export interface StoreLossDeps {
  store: Pick<EventStore<StoreEvent>, 'identity' | 'append' | 'readTurn' | 'latest'>;
  log: Logger;
  clock: Clock;
  intervalMs: number;
  holdMs: number;
  /** Counts a loss (the metric). */
  counted: () => void;
  agent: {
    storeLost(cause: string): { held: HeldSession[]; closed: Promise<unknown> };
    failHeldTurns(held: HeldSession[], cause: string): Promise<void>;
    storeRecovered(): void;
  };
  waiter: { storeLost(cause: string): void };
  /** The identity this instance holds now. */
  current: () => string;
  /** The new identity, and the one it replaces. */
  adopted: (change: { storeId: string; previousStoreId: string }) => void;
}

/** The seqs of a held session the store no longer has (its tail read now), if any. */
async function lostSeqs(store: StoreLossDeps['store'], h: HeldSession) {
  const found = await lastSeqOf(store, h.sessionId).catch(() => 0);
  return found < h.lastSeq ? { sessionId: h.sessionId, seqs: { from: found + 1, to: h.lastSeq } } : undefined;
}

/** How often a medium that can go back (Redis, PostgreSQL) is checked, and how long a recovery is watched. */
export const storeChecks = (type: 'jsonl' | 'memory' | 'redis' | 'postgres') => ({
  intervalMs: type === 'redis' || type === 'postgres' ? 1000 : 0,
  holdMs: 5000,
});

export function watchStoreLoss(deps: StoreLossDeps) {
  const { store, log, clock } = deps;
  const evidence: LossEvidence[] = [];
  let running: Promise<void> | undefined;
  let again = false;
  /** Since when the store moves forward again after a loss (undefined: no loss being recovered from). */
  let recovering: { since: number | undefined } | undefined;

  async function lost(identity: { storeId: string; previous: string }, losses: Loss[]): Promise<void> {
    const cause = losses[0]?.cause ?? judgeLoss({ kind: 'storeId', held: identity.previous, found: '' })?.cause;
    const said = `the store lost data (${cause})`;
    recovering = { since: undefined };
    const { held, closed } = deps.agent.storeLost(said);
    deps.waiter.storeLost(said);
    deps.adopted({ storeId: identity.storeId, previousStoreId: identity.previous });
    const known = new Map(losses.flatMap((l) => l.sessions).map((s) => [s.sessionId, s]));
    for (const h of held) {
      const gone = await lostSeqs(store, h);
      if (gone) known.set(h.sessionId, gone);
    }
    log.error(
      { cause, storeId: identity.storeId, previousStoreId: identity.previous, sessions: [...known.values()] },
      `${said}: what it held is gone; clients are told the new store id`,
    );
    deps.counted();
    await closed;
    await deps.agent.failHeldTurns(held, said);
    recovering.since = clock.now();
  }

  async function check(): Promise<void> {
    const losses = evidence.splice(0).flatMap((e) => (seenUnder(e) === deps.current() && judgeLoss(e)) || []);
    const identity = await store.identity(losses.some((l) => l.renew) ? 'renew' : 'check');
    if (identity.previous !== undefined)
      return lost({ storeId: identity.storeId, previous: identity.previous }, losses);
    const since = recovering?.since;
    if (since !== undefined && clock.now() - since >= deps.holdMs) {
      recovering = undefined;
      deps.agent.storeRecovered();
      log.info({ storeId: identity.storeId }, 'the store moves forward under its new identity: recovered');
    }
  }

  /** Runs a check now, or once the one under way ends; a failed check (the store unreachable) waits for the next. */
  function checkSoon(): void {
    if (running) {
      again = true;
      return;
    }
    running = check()
      .catch((err: unknown) => log.debug({ err: messageOf(err) }, 'checking the store identity failed'))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          checkSoon();
        }
      });
  }

  let timer: NodeJS.Timeout | undefined;
  return {
    /** Starts the checks (once the store's identity was read); the medium's return is a reason to check. */
    start(medium?: Pick<EventStore<StoreEvent>, 'watchMedium'>): void {
      medium?.watchMedium?.({ lost: () => undefined, back: checkSoon });
      if (deps.intervalMs > 0) timer ??= setInterval(checkSoon, deps.intervalMs);
      timer?.unref();
    },
    /** Evidence of the store going back (a refused write, a lease): judged at once. */
    noticed(e: LossEvidence): void {
      evidence.push(e);
      checkSoon();
    },
    /** Something may have changed (the medium is back): the identity is checked at once. */
    suspect: checkSoon,
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}

/** The store with each write it refuses for a loss told to `noticed` (the monitor above) before its caller hears. */
export function noticeLosses<E extends StoreEvent>(
  store: EventStore<E>,
  noticed: (e: LossEvidence) => void,
): EventStore<E> {
  return {
    ...store,
    append: (sessionId, events, fence, tail) =>
      store.append(sessionId, events, fence, tail).catch((err: unknown) => {
        const e = evidenceOf(err);
        if (e) noticed(e);
        throw err;
      }),
  };
}
