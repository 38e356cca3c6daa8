/**
 * A session's turn index as the engines keep it in memory (`EventStore.turns` / `readTurn`). `indexEvent` must see a
 * session's events in seq order; `turnPage` and `eventsOfTurn` cost the page and the turn's span, not the log.
 */
import { firstAfter, partitionPoint } from './stored-event.ts';
import type { StoreEvent, StoredEvent, TurnRange, TurnSpan } from './types.ts';

export interface TurnIndex<X extends object = object> {
  byId: Map<string, TurnSpan & X>;
  /** Ascending by first seq. */
  order: (TurnSpan & X)[];
  /** The last seq indexed (0: none). */
  to: number;
}

export const createTurnIndex = <X extends object = object>(): TurnIndex<X> => ({ byId: new Map(), order: [], to: 0 });

/** The turn an event belongs to: its `turnId` when a non-empty string. */
export const turnOf = (event: StoreEvent): string | undefined =>
  typeof event.turnId === 'string' && event.turnId !== '' ? event.turnId : undefined;

/** Indexes event `seq` of turn `turnId`: `start` makes a new span's extra fields, `grow` updates a known span's. */
export function indexEvent<X extends object>(
  index: TurnIndex<X>,
  seq: number,
  turnId: string | undefined,
  start: () => X,
  grow?: (span: TurnSpan & X) => void,
): void {
  index.to = Math.max(index.to, seq);
  if (turnId === undefined) return;
  const known = index.byId.get(turnId);
  if (known) {
    known.lastSeq = seq;
    grow?.(known);
    return;
  }
  const span = { turnId, firstSeq: seq, lastSeq: seq, ...start() };
  index.byId.set(turnId, span);
  index.order.push(span);
}

/** The spans a range asks for, as plain values. */
export function turnPage(index: TurnIndex, range: TurnRange | undefined): TurnSpan[] {
  const after = range?.after ?? 0;
  const start = partitionPoint(index.order, (span) => span.firstSeq <= after);
  const end = range?.limit === undefined ? index.order.length : start + range.limit;
  return index.order.slice(start, end).map(({ turnId, firstSeq, lastSeq }) => ({ turnId, firstSeq, lastSeq }));
}

/** The turn's events with seq > since among `events` (ascending by seq, holding the span). */
export function eventsOfTurn<E extends StoreEvent>(
  events: readonly StoredEvent<E>[],
  span: TurnSpan,
  since: number,
): StoredEvent<E>[] {
  const out: StoredEvent<E>[] = [];
  for (let i = firstAfter(events, Math.max(since, span.firstSeq - 1)); i < events.length; i++) {
    const e = events[i] as StoredEvent<E>;
    if (e.seq > span.lastSeq) break;
    if (turnOf(e.event) === span.turnId) out.push(e);
  }
  return out;
}
