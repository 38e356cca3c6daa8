/**
 * Expiry of unnamed sessions (src/session-id.ts `UNNAMED_PREFIX`: an A2A message without `contextId`,
 * a `/mcp` call without `sessionId`), `server.limits.unnamedSessions`.
 *
 * Why a periodic sweep of the store, on a machine delay: a session outlives the process and may be
 * held by another instance, so a timer per session in memory would be lost at a restart; the store's
 * listing says what exists and when it last changed, on every engine, and costs a page of keys per
 * read. It is no busy loop: one sweep at a time, then `sweepIntervalMs` of pause. Not only lazily at
 * the cap: unnamed sessions are not counted toward the cap (session/quota.ts), so nothing there would
 * ever trigger it, and their logs would stay.
 *
 * Contracts:
 * - A sweep lists every stored session a page at a time, in key order, and asks for the deletion
 *   of each unnamed one whose last event is at least `ttlMs` old, at its owner (`agent.deleteSession`
 *   with `ifIdleForMs`, which checks again there: a session whose turn runs, is queued or waits for a
 *   person is kept). It logs how many it deleted; a deletion that fails is logged and tried again by
 *   the next sweep.
 * - `start()` sweeps `sweepIntervalMs` after starting and after the end of each sweep; `stop()` ends
 *   that and resolves once a sweep under way stopped (it asks for no more deletions), so a service stops
 *   its sweeps before the agent and the store they use. The pause never holds the process open.
 */
import { createActor, fromPromise, setup } from 'xstate';
import type { Bus } from '../bus/index.ts';
import type { Clock } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import { isSessionKey, isUnnamed } from '../session-id.ts';
import type { EventStore, StoreEvent } from '../store/types.ts';
import type { AgentCommands, AgentEvents } from './messages.ts';

/** Sessions listed per store read. */
const PAGE = 500;

export interface UnnamedExpiryOptions {
  bus: Pick<Bus<AgentCommands, AgentEvents>, 'execute'>;
  store: Pick<EventStore<StoreEvent>, 'list'>;
  clock: Clock;
  log: Logger;
  ttlMs: number;
  sweepIntervalMs: number;
}

const sweeper = setup({
  types: { context: {} as { intervalMs: number }, input: {} as { intervalMs: number } },
  actors: { sweep: fromPromise<void>(() => Promise.resolve()) },
  delays: { interval: ({ context }) => context.intervalMs },
}).createMachine({
  id: 'unnamed-expiry',
  context: ({ input }) => ({ intervalMs: input.intervalMs }),
  initial: 'waiting',
  states: {
    waiting: { after: { interval: 'sweeping' } },
    sweeping: { invoke: { src: 'sweep', onDone: 'waiting', onError: 'waiting' } },
  },
});

/** Timers of the sweeper's machine that do not keep the process alive. */
const unrefTimers = {
  setTimeout: (fn: (...args: unknown[]) => void, ms: number) => setTimeout(fn, ms).unref(),
  clearTimeout: (timer: unknown) => clearTimeout(timer as NodeJS.Timeout),
};

export function createUnnamedExpiry(options: UnnamedExpiryOptions) {
  const { bus, store, clock, log, ttlMs } = options;
  let stopped = false;
  let current: Promise<void> = Promise.resolve();

  async function expire(sessionId: string): Promise<boolean> {
    if (!isSessionKey(sessionId)) return false;
    try {
      const { deleted } = await bus.execute('agent.deleteSession', { sessionId, ifIdleForMs: ttlMs }, { sessionId });
      return deleted;
    } catch (err) {
      log.warn({ err, sessionId }, 'an expired unnamed session could not be deleted');
      return false;
    }
  }

  async function sweep(): Promise<void> {
    let deleted = 0;
    let after: string | undefined;
    for (;;) {
      const page = await store.list({ limit: PAGE, ...(after !== undefined && { after }) });
      const cutoff = clock.now() - ttlMs;
      for (const { id, updatedAt } of page)
        if (!stopped && isUnnamed(id) && Date.parse(updatedAt) <= cutoff && (await expire(id))) deleted++;
      if (page.length < PAGE || stopped) break;
      after = page.at(-1)?.id;
    }
    if (deleted > 0) log.info({ deleted, ttlMs }, 'expired unnamed sessions deleted');
  }

  const actor = createActor(
    sweeper.provide({
      actors: {
        sweep: fromPromise<void>(
          () => (current = sweep().catch((err: unknown) => log.warn({ err }, 'sweeping unnamed sessions failed'))),
        ),
      },
    }),
    { input: { intervalMs: options.sweepIntervalMs }, clock: unrefTimers },
  );

  return {
    start: () => void actor.start(),
    /** Ends the sweeps; resolves once one under way stopped (before its next deletion). */
    stop: (): Promise<void> => {
      stopped = true;
      actor.stop();
      return current;
    },
  };
}
