/**
 * The end of a fire's turn: its `response` or `turnFailed` fact (or an error frame), heard on the session's bus
 * events, records the fire `finished` or `failed` with the turn's usage (after it was recorded `sent`).
 */
import type { Clock } from '../clock.ts';
import type { Logger } from '../log/index.ts';
import type { ScheduleMetrics } from './schedule-metrics.ts';
import type { FireRecord, ScheduleStore } from './store-types.ts';

/** How a fire's turn ended: its usage, or why it failed (the code of its failure). */
export type TurnEnd = { failed: false; usage?: Record<string, unknown> } | { failed: true; code: string };

/** The end of a turn in an event of the session's bus (its `response` or `turnFailed` fact, an error frame). */
export function endOf(event: { name: string; payload: unknown }): { turnId: string; end: TurnEnd } | undefined {
  if (event.name === 'agent.error') {
    const { turnId, code } = event.payload as { turnId?: string; code: string };
    return turnId === undefined ? undefined : { turnId, end: { failed: true, code } };
  }
  if (event.name !== 'agent.stored') return undefined;
  const { event: e } = event.payload as {
    event: { type: string; turnId?: string; usage?: Record<string, unknown>; code?: string };
  };
  if (e.turnId === undefined) return undefined;
  if (e.type === 'response') return { turnId: e.turnId, end: { failed: false, ...(e.usage && { usage: e.usage }) } };
  if (e.type === 'turnFailed') return { turnId: e.turnId, end: { failed: true, code: e.code ?? 'AGENT_ERROR' } };
  return undefined;
}

export interface EndDeps {
  /** Any bus that carries the agent's events (its listener is handed every event of the session). */
  bus: { onSession(sessionId: string, listener: (event: { name: string; payload: unknown }) => unknown): () => void };
  store: Pick<ScheduleStore, 'update' | 'runs'>;
  clock: Clock;
  log: Logger;
  metrics: ScheduleMetrics | undefined;
  /** Keeps the record's write until the scheduler stops. */
  track: <T>(p: Promise<T>) => Promise<T>;
  /** Told once a run's end is recorded (the scheduler sends the run queued behind it). */
  ended?: (fire: FireRecord) => void;
}

/** The fire's turn ended: records it `finished` or `failed`, with its usage. */
export function recordEnd(deps: EndDeps, fire: FireRecord, end: TurnEnd): void {
  const { store, clock, log, metrics, track } = deps;
  if (end.failed) metrics?.failures.inc();
  const ended: FireRecord = {
    ...fire,
    status: end.failed ? 'failed' : 'finished',
    finishedAt: new Date(clock.now()).toISOString(),
    ...(!end.failed && end.usage && { usage: end.usage }),
    ...(end.failed && { reason: end.code }),
  };
  void track(store.update(ended))
    .then(() => deps.ended?.(ended))
    .catch((e: unknown) => log.error({ err: e }, 'recording a fire failed'));
}

/**
 * Listens to the session before the message is sent (a short turn may end before `sendMessage` answers); `follow`
 * names the fire once it is recorded `sent`, so its end is recorded after that.
 */
export function watchEnds(deps: EndDeps, key: string) {
  const early = new Map<string, TurnEnd>();
  let fire: FireRecord | undefined;
  const off = deps.bus.onSession(key, (event) => {
    const ended = endOf(event);
    if (ended === undefined) return;
    if (fire?.turnId !== ended.turnId) return void early.set(ended.turnId, ended.end);
    off();
    recordEnd(deps, fire, ended.end);
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
