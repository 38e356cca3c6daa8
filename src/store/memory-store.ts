/* eslint-disable @typescript-eslint/require-await -- async so that throws become rejections */
import { systemClock, type Clock } from '../clock.ts';
import { storeGuard } from './session-id.ts';
import { appendGuard, firstAfter, logJsons, sessionExists, storedEvent } from './stored-event.ts';
import { byKey, inRange } from './session-range.ts';
import { createRecencyIndex } from './recency-index.ts';
import { heldIdentity } from './store-id.ts';
import { createTurnIndex, eventsOfTurn, indexEvent, turnOf, turnPage, type TurnIndex } from './turn-index.ts';
import type { EventStore, SessionInfo, StoreEvent, StoredEvent } from './types.ts';

/** The in-memory EventStore (tests, ephemeral deployments): behaves as the durable ones, but keeps nothing. */
export function createMemoryStore<E extends StoreEvent>(deps: { clock?: Clock } = {}): EventStore<E> {
  const clock = deps.clock ?? systemClock;
  const sessions = new Map<string, StoredEvent<E>[]>();
  const turns = new Map<string, TurnIndex>();
  const recency = createRecencyIndex();
  let closed = false;
  const none = () => ({});
  const index = (sessionId: string, stored: readonly StoredEvent<E>[]) => {
    let turnIndex = turns.get(sessionId);
    if (!turnIndex) turns.set(sessionId, (turnIndex = createTurnIndex()));
    for (const e of stored) indexEvent(turnIndex, e.seq, turnOf(e.event), none);
  };
  const guard = storeGuard(() => closed);
  const identity = heldIdentity(() => guard());
  const prepareAppend = appendGuard(guard, clock);

  return {
    async append(sessionId, events) {
      const batch = prepareAppend(sessionId, events);
      if (!batch) return [];
      const { jsons, ts } = batch;
      let stream = sessions.get(sessionId);
      if (!stream) sessions.set(sessionId, (stream = []));
      let seq = stream.at(-1)?.seq ?? 0;
      const stored = jsons.map((json) => storedEvent<E>(++seq, ts, sessionId, json));
      for (const e of stored) stream.push(e);
      index(sessionId, stored);
      recency.set({ id: sessionId, lastSeq: seq, updatedAt: ts }, turns.get(sessionId)?.order.length);
      return stored;
    },

    async create(sessionId, log) {
      guard(sessionId);
      const jsons = logJsons(log);
      if (jsons.length === 0) return [];
      if ((sessions.get(sessionId)?.length ?? 0) > 0) throw sessionExists(sessionId);
      const stored = jsons.map((json, i) => storedEvent<E>(log[i]!.seq, log[i]!.ts, sessionId, json));
      sessions.set(sessionId, [...stored]);
      turns.delete(sessionId);
      index(sessionId, stored);
      const last = stored.at(-1)!;
      recency.set({ id: sessionId, lastSeq: last.seq, updatedAt: last.ts }, turns.get(sessionId)?.order.length);
      return stored;
    },

    async read(sessionId, since = 0) {
      guard(sessionId);
      const stream = sessions.get(sessionId);
      return stream ? stream.slice(firstAfter(stream, since)) : [];
    },

    async latest(sessionId, types) {
      guard(sessionId);
      return sessions.get(sessionId)?.findLast((e) => types.includes(e.event.type));
    },

    async turns(sessionId, range) {
      guard(sessionId);
      const turnIndex = turns.get(sessionId);
      return turnIndex ? turnPage(turnIndex, range) : [];
    },

    async readTurn(sessionId, turnId, since = 0) {
      guard(sessionId);
      const span = turns.get(sessionId)?.byId.get(turnId);
      return span ? eventsOfTurn(sessions.get(sessionId) ?? [], span, since) : [];
    },

    async list(range) {
      guard();
      const out: SessionInfo[] = [];
      for (const [id, stream] of sessions) {
        const last = stream.at(-1);
        if (last && inRange(id, range)) out.push({ id, lastSeq: last.seq, updatedAt: last.ts });
      }
      out.sort(byKey);
      return range?.limit === undefined ? out : out.slice(0, range.limit);
    },

    async recent(query) {
      guard();
      return recency.page(query);
    },

    async turnTotal(owner) {
      guard();
      return recency.turnTotal(owner);
    },

    async has(sessionId) {
      guard(sessionId);
      return (sessions.get(sessionId)?.length ?? 0) > 0;
    },

    async delete(sessionId) {
      guard(sessionId);
      turns.delete(sessionId);
      recency.remove(sessionId);
      return sessions.delete(sessionId);
    },

    open: () => Promise.resolve(),

    ...identity,

    async close() {
      closed = true;
      sessions.clear();
      turns.clear();
      recency.clear();
    },
  };
}
