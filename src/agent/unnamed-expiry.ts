/**
 * Expiry of unnamed sessions (src/session-id.ts), `server.limits.unnamedSessions`, by a periodic sweep of the store:
 * a session outlives the process and may be held elsewhere, and unnamed ones do not count toward the cap
 * (session/quota.ts), so neither a timer in memory nor the cap would ever delete their logs.
 * - A sweep pages through the stored sessions and asks the owner of each unnamed one idle for `ttlMs` to delete it
 *   (`agent.deleteSession` `ifIdleForMs`: one running, queued or waiting for a person stays); a failed deletion is
 *   logged and tried again next sweep.
 * - Sweeps run `sweepIntervalMs` after `start()` and after each sweep, never holding the process open. `stop()`
 *   resolves once a sweep under way stopped (it asks for no more deletions).
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
      const { deleted } = await bus.execute('agent.deleteSession', { sessionId, ifIdleForMs: ttlMs });
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
    stop: (): Promise<void> => {
      stopped = true;
      actor.stop();
      return current;
    },
  };
}
