/** Metadata every bus message travels with. */
export interface Envelope<N extends string = string, P = unknown> {
  /** Unique id of this message. */
  id: string;
  /** Milliseconds since the epoch, from the injected clock. */
  ts: number;
  /** Id of the command (or request) this message answers or descends from. */
  correlationId: string;
  /** Session the message concerns, if any. */
  sessionId?: string;
  name: N;
  payload: P;
}

/** What a sender may set; the bus fills in the rest. */
export interface SendMeta {
  correlationId?: string;
  sessionId?: string;
}

/** Injected sources of time and ids (house rule 7: no hidden globals). */
export interface Clock {
  now(): number;
}
export type IdSource = () => string;

export const systemClock: Clock = { now: () => Date.now() };

/** Cheap unique ids: a random per-process prefix plus a counter (no crypto call per chunk). */
export function createIdSource(prefix = Math.random().toString(36).slice(2, 8)): IdSource {
  let n = 0;
  return () => `${prefix}-${(++n).toString(36)}`;
}
