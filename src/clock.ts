/** Injected sources of time and ids (house rule 7: nothing reads Date.now or makes ids on its own). */
export interface Clock {
  now(): number; // ms since the epoch
}
export type IdSource = () => string;

export const systemClock: Clock = { now: () => Date.now() };

export const isoNow = (clock: Clock): string => new Date(clock.now()).toISOString();

/** Cheap unique ids: a random per-process prefix plus a counter (no crypto call per chunk). */
export function createIdSource(prefix = Math.random().toString(36).slice(2, 8)): IdSource {
  let n = 0;
  return () => `${prefix}-${(++n).toString(36)}`;
}
