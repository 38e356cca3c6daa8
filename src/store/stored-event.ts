import { isoNow, type Clock } from '../clock.ts';
import { AppError } from '../errors/index.ts';
import type { EventParser, LogEntry, StoreEvent, StoredEvent } from './types.ts';

/**
 * Helpers shared by the engines, so that all hand out the same values: an event is stored as its JSON form (what a
 * durable store reads back) and handed out deep-frozen, so no caller can change the log through what it was given.
 */

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** JSON text of an event; rejects (INTERNAL_ERROR) what JSON cannot carry. */
export function eventJson(event: StoreEvent): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(event);
  } catch (e) {
    throw new AppError('INTERNAL_ERROR', 'event is not serialisable as JSON', { cause: String(e) });
  }
  if (text === undefined || !text.startsWith('{')) {
    throw new AppError('INTERNAL_ERROR', 'event is not a JSON object');
  }
  return text;
}

/** The JSON texts of a log given to `create`, once its seqs are checked to ascend (INTERNAL_ERROR otherwise). */
export function logJsons(log: readonly LogEntry[]): string[] {
  let last = 0;
  return log.map((entry) => {
    if (!Number.isSafeInteger(entry.seq) || entry.seq <= last || typeof entry.ts !== 'string') {
      throw new AppError('INTERNAL_ERROR', 'a log to create must have ascending seqs from 1 and a time on each event', {
        seq: entry.seq,
        after: last,
      });
    }
    last = entry.seq;
    return eventJson(entry.event);
  });
}

/** `create` of a session that already has a log. */
export const sessionExists = (sessionId: string): AppError =>
  new AppError('INTERNAL_ERROR', `session ${sessionId} already has a log`, { sessionId, reason: 'exists' });

/** One JSONL line (without the newline) with a stable key order: seq, ts, sessionId, event. */
export function storedLine(seq: number, ts: string, sessionId: string, json: string): string {
  return `{"seq":${seq},"ts":${JSON.stringify(ts)},"sessionId":${JSON.stringify(sessionId)},"event":${json}}`;
}

/** The frozen value handed out for an event whose JSON text is `json`. */
export function storedEvent<E extends StoreEvent>(
  seq: number,
  ts: string,
  sessionId: string,
  json: string,
): StoredEvent<E> {
  return deepFreeze({ seq, ts, sessionId, event: JSON.parse(json) as E });
}

/** Parses and checks one stored line; `undefined` when it is not a valid StoredEvent. */
export function parseStoredLine<E extends StoreEvent>(
  text: string,
  parseEvent: EventParser<E>,
): StoredEvent<E> | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const { seq, ts, sessionId, event: raw } = v as Record<string, unknown>;
  if (!Number.isSafeInteger(seq) || (seq as number) <= 0 || typeof ts !== 'string' || typeof sessionId !== 'string')
    return undefined;
  const event = parseEvent(raw);
  return event && deepFreeze({ seq: seq as number, ts, sessionId, event });
}

/** Index of the first item `before` is false of (`items` holds every item it is true of before every other). */
export function partitionPoint<T>(items: readonly T[], before: (item: T) => boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(items[mid] as T)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first event with seq > since (events ascend by seq, possibly with gaps). */
export const firstAfter = (events: readonly StoredEvent<StoreEvent>[], since: number): number =>
  partitionPoint(events, (e) => e.seq <= since);

/**
 * How every engine's append begins: the store open and the id valid (`guard` throws), then the events serialized once
 * and stamped with one time; `undefined` when there is nothing to append.
 */
export const appendGuard =
  (guard: (sessionId: string) => void, clock: Clock) =>
  (sessionId: string, events: readonly StoreEvent[]): { jsons: string[]; ts: string } | undefined => {
    guard(sessionId);
    return events.length === 0 ? undefined : { jsons: events.map(eventJson), ts: isoNow(clock) };
  };
