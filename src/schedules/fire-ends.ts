/**
 * The end of a fire's turn: its `agent.response` or `agent.error`, heard on the session's bus events, records the fire
 * `finished` or `failed` with the turn's usage (after it was recorded `sent`).
 */
import type { Clock } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import type { ScheduleMetrics } from './schedule-metrics.ts';
import type { FireRecord, ScheduleStore } from './store-types.ts';

/** An event on the session's bus, as far as a fire's end needs it. */
export type SessionEvent = { name: string; payload: unknown };

export interface EndDeps {
  /** Any bus that carries the agent's events (its listener is handed every event of the session). */
  bus: { onSession(sessionId: string, listener: (event: SessionEvent) => unknown): () => void };
  store: Pick<ScheduleStore, 'update' | 'runs'>;
  clock: Clock;
  log: Logger;
  metrics: ScheduleMetrics | undefined;
  /** Keeps the record's write until the scheduler stops. */
  track: <T>(p: Promise<T>) => Promise<T>;
}

/** The fire's turn ended: records it `finished` or `failed`, with its usage. */
export function recordEnd(deps: EndDeps, fire: FireRecord, event: SessionEvent): void {
  const { store, clock, log, metrics, track } = deps;
  const payload = event.payload as { usage?: Record<string, unknown>; code?: string };
  const failed = event.name === 'agent.error';
  if (failed) metrics?.failures.inc();
  const ended: FireRecord = {
    ...fire,
    status: failed ? 'failed' : 'finished',
    finishedAt: new Date(clock.now()).toISOString(),
    ...(payload.usage && { usage: payload.usage }),
    ...(failed && payload.code && { reason: payload.code }),
  };
  void track(store.update(ended)).catch((e: unknown) => log.error({ err: e }, 'recording a fire failed'));
}

/**
 * Listens to the session before the message is sent (a short turn may end before `sendMessage` answers); `follow`
 * names the fire once it is recorded `sent`, so its end is recorded after that.
 */
export function watchEnds(deps: EndDeps, key: string) {
  const early = new Map<string, SessionEvent>();
  let fire: FireRecord | undefined;
  const off = deps.bus.onSession(key, (event) => {
    if (event.name !== 'agent.response' && event.name !== 'agent.error') return;
    const turnId = (event.payload as { turnId?: string }).turnId;
    if (turnId === undefined) return;
    if (fire?.turnId !== turnId) return void early.set(turnId, event);
    off();
    recordEnd(deps, fire, event);
  });
  return {
    off,
    follow(sent: FireRecord): void {
      fire = sent;
      const ended = early.get(sent.turnId ?? '');
      early.clear();
      if (ended) {
        off();
        recordEnd(deps, sent, ended);
      }
    },
  };
}
