/**
 * A watched session's facts as this instance hears them, without gaps or repeats, though Redis pub/sub drops what is
 * published while a subscriber is away (a Redis restart, an outage) and two publishers (an old owner and its
 * successor) are not ordered with each other (issue 71, the chaos run's WebSocket misses).
 *
 * Contracts:
 * - Each session's facts (`agent.stored`, numbered by seq) are emitted here in seq order, each once: a fact no newer
 *   than the newest one heard (relayed, read back, or stored by this instance: `heard`) is dropped; one past the
 *   next seq first brings the missing ones from the store (`read`), in order. Before the first fact of a watch, the
 *   session's last seq as the watch began (`known`) is where a gap is measured from: the facts up to it are the
 *   watcher's replay's, so none is read back or dropped for it.
 * - `reread(sessionId)` (Redis is back) reads what was stored after the newest fact heard and emits it: what was
 *   published while this instance's subscription was away; a failed read is tried again 5 times, from 250 ms apart
 *   doubling (the store's connection may come back after the subscriber's).
 * - `catchUp(sessionId)` (this instance took the session's lease and is about to write its log) reads and emits, once,
 *   what was stored after the newest fact heard, and resolves after: what an owner paused or cut off stored before
 *   its copies reached this instance would otherwise come after the facts this instance writes next, as a gap.
 * - While a read is in flight, the session's other relayed events wait behind it, in order; a failed read is logged
 *   and lets them go (the gap stays: a client resuming with `since` still gets every fact).
 * - Transient frames (chunks, thinking) pass as they come: what was lost of them is not stored anywhere.
 * - A fact sent as its seq alone (`relayRef`, on Postgres) is read from the store with every fact before it not heard
 *   yet, and emitted in order, the session's later events waiting behind the read; before the watch knows where it
 *   began, that fact alone.
 */
import type { SendMeta } from '../bus/index.ts';
import type { Logger } from '../log/index.ts';
import { messageOf } from '../errors/index.ts';

/** A stored fact as the bus carries it (src/agent `SessionStoredEvent`; the cluster does not import the agent). */
export interface StoredFact {
  seq: number;
  ts: string;
  event: object;
}

export interface GapRepairOptions {
  /** The bus name of a stored fact (`agent.stored`). */
  factName: string;
  /** The session's stored facts after seq `since`, in order. */
  read: (sessionId: string, since: number) => Promise<readonly StoredFact[]>;
  /** Emits to this instance's listeners only. */
  emit: (name: string, payload: unknown, meta: SendMeta & { correlationId: string }) => void;
  log: Logger;
}

/** How often, and from how long apart (doubling), a reread whose read failed is tried again. */
const REREADS = 5;
const REREAD_MS = 250;

interface SessionGaps {
  /** The newest seq heard (0: none yet, nothing to compare with). */
  newest: number;
  /** The session's last seq when its watch began (`known`): a later fact past it shows a gap; none is dropped for it. */
  known: number;
  /** Relayed events waiting behind a read in flight. */
  waiting: (() => void)[] | undefined;
}

export function createGapRepair(options: GapRepairOptions) {
  const { factName, read, emit, log } = options;
  const sessions = new Map<string, SessionGaps>();
  const of = (sessionId: string): SessionGaps => {
    let gaps = sessions.get(sessionId);
    if (!gaps) sessions.set(sessionId, (gaps = { newest: 0, known: 0, waiting: undefined }));
    return gaps;
  };
  const seqOf = (name: string, payload: unknown): number | undefined =>
    name === factName && typeof (payload as StoredFact | undefined)?.seq === 'number'
      ? (payload as StoredFact).seq
      : undefined;

  /** Where a gap begins: the newest fact heard, or the session's last when its watch began if that is newer. */
  const floorOf = (gaps: SessionGaps) => Math.max(gaps.newest, gaps.known);

  /**
   * Holds the session's relayed events (`then` first), reads and emits the facts past the floor (`from` when nothing
   * is known yet) and before `until`, then lets them go.
   */
  async function fill(
    sessionId: string,
    gaps: SessionGaps,
    until: number,
    then?: () => void,
    from = floorOf(gaps),
  ): Promise<boolean> {
    gaps.waiting = then ? [then] : [];
    let filled = true;
    try {
      const floor = floorOf(gaps) > 0 ? floorOf(gaps) : from;
      const stored = await read(sessionId, floor);
      // A watch that ended meanwhile emits nothing read: a new one measures from its own start (its watchers replay).
      const current = sessions.get(sessionId) === gaps;
      const found = current ? stored.filter((s) => s.seq < until && s.seq > Math.max(floor, gaps.newest)) : [];
      if (found.length > 0)
        log.info({ sessionId, seqs: found.map((s) => s.seq) }, 'cluster: facts read back for a gap');
      for (const s of found) {
        gaps.newest = s.seq;
        const turnId = 'turnId' in s.event && typeof s.event.turnId === 'string' ? s.event.turnId : undefined;
        emit(factName, s, { correlationId: turnId ?? `${sessionId}:${s.seq}`, ts: Date.parse(s.ts) });
      }
    } catch (err) {
      filled = false;
      log.warn({ err: messageOf(err), sessionId }, 'cluster: could not read back the facts of a gap');
    }
    if (until !== Infinity) gaps.newest = Math.max(gaps.newest, until - 1); // the gap is done with, filled or not
    const waiting = gaps.waiting ?? [];
    gaps.waiting = undefined;
    for (const next of waiting) next();
    return filled;
  }

  /** `reread`, tried again while the store is not back yet (its connection may come back after the subscriber's). */
  function rereadFrom(sessionId: string, attempt: number): void {
    const gaps = of(sessionId);
    if (floorOf(gaps) === 0 || gaps.waiting) return;
    void fill(sessionId, gaps, Infinity).then((filled) => {
      if (!filled && attempt < REREADS && sessions.get(sessionId) === gaps)
        setTimeout(() => rereadFrom(sessionId, attempt + 1), REREAD_MS * 2 ** attempt).unref();
    });
  }

  function relayRef(sessionId: string, seq: number): void {
    const gaps = of(sessionId);
    if (gaps.waiting) return void gaps.waiting.push(() => relayRef(sessionId, seq));
    if (seq <= floorOf(gaps)) return;
    void fill(sessionId, gaps, seq + 1, undefined, seq - 1);
  }

  function relay(sessionId: string, name: string, payload: unknown, meta: SendMeta & { correlationId: string }): void {
    const gaps = of(sessionId);
    if (gaps.waiting) return void gaps.waiting.push(() => relay(sessionId, name, payload, meta));
    const seq = seqOf(name, payload);
    if (seq === undefined) return emit(name, payload, meta);
    if (seq <= gaps.newest) return; // heard already (read back, or a late copy of an old owner's)
    if (floorOf(gaps) > 0 && seq > floorOf(gaps) + 1)
      return void fill(sessionId, gaps, seq, () => relay(sessionId, name, payload, meta));
    gaps.newest = seq;
    emit(name, payload, meta);
  }

  return {
    /** A relayed event of a watched session (see the contracts). */
    relay,
    /** A stored fact sent as its seq alone (see the contracts). */
    relayRef,
    /** A fact this instance stored and emitted itself. */
    heard(sessionId: string, seq: number): void {
      const gaps = sessions.get(sessionId);
      if (gaps) gaps.newest = Math.max(gaps.newest, seq);
    },
    /** The session's last seq as its watch began (see the contracts). */
    known(sessionId: string, seq: number): void {
      const gaps = of(sessionId);
      gaps.known = Math.max(gaps.known, seq);
    },
    /** Reads what was stored after the newest fact heard (see the contracts). */
    reread: (sessionId: string): void => rereadFrom(sessionId, 0),
    /** Reads, once, what was stored after the newest fact heard, before this instance writes (see the contracts). */
    async catchUp(sessionId: string): Promise<void> {
      const gaps = sessions.get(sessionId);
      if (gaps && floorOf(gaps) > 0 && !gaps.waiting) await fill(sessionId, gaps, Infinity);
    },
    /** The session is not watched any more. */
    forget: (sessionId: string): void => void sessions.delete(sessionId),
  };
}
