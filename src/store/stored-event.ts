import { AppError } from '../errors/index.ts';
import type { DomainEvent, DomainEventType, SessionInfo, StoredEvent } from './types.ts';

/**
 * Helpers shared by the stores, so that every engine hands out the same values: an event is
 * stored as its JSON form (what a restart of a durable store would read back) and handed out
 * deep-frozen, so no caller can change the log by mutating what it was given.
 */

const EVENT_TYPES: ReadonlySet<string> = new Set<DomainEventType>([
  'userMessage', 'assistantMessage', 'toolCall', 'toolResult', 'reset', 'turnFailed',
]);

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** JSON text of a domain event; rejects (INTERNAL_ERROR) what JSON cannot carry. */
export function eventJson(event: DomainEvent): string {
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

/** One JSONL line (without the newline) with a stable key order: seq, ts, sessionId, event. */
export function storedLine(seq: number, ts: string, sessionId: string, json: string): string {
  return `{"seq":${seq},"ts":${JSON.stringify(ts)},"sessionId":${JSON.stringify(sessionId)},"event":${json}}`;
}

/** The frozen value handed out for an event whose JSON text is `json`. */
export function storedEvent(seq: number, ts: string, sessionId: string, json: string): StoredEvent {
  return deepFreeze({ seq, ts, sessionId, event: JSON.parse(json) as DomainEvent });
}

/** Parses and checks one stored line; `undefined` when it is not a plausible StoredEvent. */
export function parseStoredLine(text: string): StoredEvent | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const ev = o['event'] as Record<string, unknown> | null | undefined;
  const ok =
    Number.isSafeInteger(o['seq']) && (o['seq'] as number) > 0 &&
    typeof o['ts'] === 'string' && typeof o['sessionId'] === 'string' &&
    typeof ev === 'object' && ev !== null && typeof ev['type'] === 'string' && EVENT_TYPES.has(ev['type']);
  return ok ? deepFreeze(v as StoredEvent) : undefined;
}

/** Index of the first event with seq > since (events ascend by seq, possibly with gaps). */
export function firstAfter(events: readonly StoredEvent[], since: number): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((events[mid]?.seq ?? 0) <= since) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Order of `list()` results: by id, code-unit order. */
export const byId = (a: SessionInfo, b: SessionInfo): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
