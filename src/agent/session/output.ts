/**
 * A session's way out: its facts to the store (through the outbox), their frames and the transient
 * frames to clients.
 *
 * Contracts:
 * - Every fact is appended in order; once stored, it is published (`agent.stored`, frames.ts) with the
 *   caller's meta (a turn's key) and the time it was stored (the bus event's `ts`), and handed to the reactions. Transient frames (thinking, chunk,
 *   dropped messages, awaiting) are published in the same order, with the last durable seq; a chunk goes out at once
 *   when nothing is pending. `awaiting` carries the time the last fact recorded before it was stored, as a stored read
 *   of its turn does.
 * - Every failed append is told to the storage health (and to the caller's `failed`).
 * - A fact of a turn that cannot be stored ends that turn once (`turnNotStored`): the rest of the
 *   turn's output is dropped, a `storage` error frame goes out, and `stopTurn` is asked to stop it. That end is
 *   stored too, as the frame said it (a `turnFailed`, `reason: "storage"`), so nothing takes the turn for one its
 *   process left running, nor runs again a queued message whose turn so ended: before the session's next fact of
 *   another turn (or of none), or at `endStopped()` (the session closes while its log is still its own, or the store
 *   says its medium is back), whichever comes first, if the log holds the turn unended as the end is written
 *   (`unendedInLog`: its `userMessage` or `messageQueued`, no end; decided after the outbox's catch-up); every
 *   stopped turn's end so, each once; a write that fails again is tried again at the next of them.
 * - A fact the outbox found stored though its write failed here (a lost answer) is published and handed to the
 *   reactions as a stored one is, in seq order; a message it says is queued runs here (the log says it waits).
 *   One the bus carried already (`factsOnBus`: relayed or read back by the cluster) is not published again.
 * - Once the outbox is closed (session deleted or moved), facts and frames are dropped there; that
 *   is not a storage failure (health untouched, no `storage` frame), though `failed` still runs.
 * - One object per session: its methods are on the prototype, its state in fields.
 */
import { EVENT_VERSION, type SessionEvent, type SessionEventOf } from '../../conversation/session-events.ts';
import type { TurnKey } from '../../conversation/turn-contract.ts';
import type { SendMeta } from '../../bus/index.ts';
import { awaitingFrame, type SessionStoredEvent } from '../frames.ts';
import { chunkFrame, storageFailedFrame, thinkingFrame } from '../transient-frames.ts';
import { isOutboxClosed, type Outbox } from './outbox.ts';
import { storageCause } from './storage-health.ts';
import { isStoreLost } from '../../store/index.ts';
import type { SessionDeps } from './types.ts';

export interface SessionOutputDeps extends Pick<
  SessionDeps,
  'sessionId' | 'publish' | 'storage' | 'reactions' | 'factsOnBus'
> {
  outbox: Outbox;
  /** Stops the turn if it still runs (its facts can no longer be stored). */
  stopTurn: (turnId: string) => void;
  /** Whether the log holds the turn (its `userMessage`, or its `messageQueued`) and not its end. */
  unendedInLog: (turnId: string) => boolean;
  /** Runs a message the log says is queued (`messageQueued`, not started), unless it is queued here already. */
  requeue: (turnId: string) => void;
}

export const createSessionOutput = (deps: SessionOutputDeps): SessionOutput => new SessionOutput(deps);

export class SessionOutput {
  private failedTurn: string | undefined = undefined;
  /** The newest of the session's facts this instance's bus carried (`factsOnBus`). */
  private newestOnBus = 0;
  private readonly stopHearing: (() => void) | undefined;
  /** The ends of the turns `turnNotStored` stopped, while they are not stored (see the contracts), by turn; made on first use. */
  private stopped: Map<string, SessionEventOf<'turnFailed'>> | undefined = undefined;
  /** When the last fact recorded here was stored (ms): what `awaiting` is stamped with. */
  private lastStoredAt: number | undefined = undefined;
  private readonly deps: SessionOutputDeps;

  constructor(deps: SessionOutputDeps) {
    this.deps = deps;
    this.stopHearing = deps.factsOnBus?.((seq) => (this.newestOnBus = Math.max(this.newestOnBus, seq)));
  }

  /** The hot path: a chunk of a turn's reply. */
  chunk(key: TurnKey, content: string): void {
    const { outbox, publish, sessionId } = this.deps;
    const turnId = key.turnId;
    if (outbox.idle) {
      if (outbox.open) publish(chunkFrame(sessionId, turnId, outbox.lastSeq, content), key);
    } else outbox.transient((seq) => publish(chunkFrame(sessionId, turnId, seq, content), key), turnId);
  }

  /** The turn waits for `questionIds` (frames.ts `AwaitingData`), after the facts handed in before, stamped as the last. */
  awaiting(key: TurnKey, questionIds: string[]): void {
    const { outbox, publish, sessionId } = this.deps;
    outbox.transient((seq) => {
      const meta = this.lastStoredAt === undefined ? key : { ...key, ts: this.lastStoredAt };
      publish(awaitingFrame(sessionId, key.turnId, seq, questionIds), meta);
    }, key.turnId);
  }

  thinking(key: TurnKey): void {
    const { outbox, publish, sessionId } = this.deps;
    outbox.transient((seq) => publish(thinkingFrame(sessionId, key.turnId, seq), key), key.turnId);
  }

  /** Stores a fact, then publishes its frame and calls `then`; `failed` runs instead when it could not be stored. */
  record(
    meta: SendMeta,
    event: SessionEvent,
    then?: (stored: SessionStoredEvent) => void,
    failed?: (err: unknown) => void,
  ): void {
    if (this.stopped !== undefined && this.stopped.size > 0)
      this.endStoppedBut('turnId' in event ? event.turnId : undefined);
    const stored = (s: SessionStoredEvent) => {
      this.lastStoredAt = Date.parse(s.ts);
      this.tell(s, meta);
      then?.(s);
    };
    this.deps.outbox.durable(event, stored, (err) => {
      if (!isOutboxClosed(err)) this.deps.storage.failed(err);
      failed?.(err);
    });
  }

  /** A fact of this turn could not be stored (see the contracts). */
  turnNotStored(key: TurnKey, err: unknown): void {
    const { outbox, publish, sessionId } = this.deps;
    if (isOutboxClosed(err) || this.failedTurn === key.turnId) return;
    this.failedTurn = key.turnId;
    outbox.abandon(key.turnId);
    const frame = storageFailedFrame(sessionId, key.turnId, outbox.lastSeq, storageCause(err), isStoreLost(err));
    publish(frame, key);
    if (frame.event === 'error') {
      const { code, message, details } = frame.data;
      const end = { v: EVENT_VERSION, type: 'turnFailed', turnId: key.turnId, code, message, details } as const;
      (this.stopped ??= new Map()).set(key.turnId, end);
    }
    this.deps.stopTurn(key.turnId);
  }

  /** Stores the ends of the turns a storage failure stopped, those still to be stored (see the contracts). */
  endStopped(): void {
    this.endStoppedBut(undefined);
  }

  /** Stops hearing the bus (the session closed). */
  stop(): void {
    this.stopHearing?.();
  }

  /** A fact found stored that no append here reported (outbox.ts, a catch-up): published as a stored one is. */
  found(s: SessionStoredEvent): void {
    const turnId = 'turnId' in s.event ? s.event.turnId : undefined;
    this.tell(s, turnId === undefined ? {} : { correlationId: turnId });
    if (s.event.type === 'messageQueued') this.deps.requeue(s.event.turnId);
  }

  /**
   * A stored fact told on: its `agent.stored` event (stamped with the time it was stored) unless the bus carried it
   * already, then the reactions.
   */
  private tell(s: SessionStoredEvent, meta: SendMeta): void {
    if (s.seq > this.newestOnBus) this.deps.publish({ event: 'stored', data: s }, { ...meta, ts: Date.parse(s.ts) });
    this.deps.reactions?.stored(s);
  }

  /**
   * Hands the outbox the ends of the stopped turns, bar `except`'s: each is written only if the log holds its turn
   * unended as its batch is cut, after any catch-up (`keepIf`), since the state may not yet hold what a failed write
   * left there.
   */
  private endStoppedBut(except: string | undefined): void {
    const stopped = this.stopped;
    if (stopped === undefined) return;
    for (const [turnId, end] of stopped) {
      if (turnId === except) continue;
      stopped.delete(turnId);
      const failed = (err: unknown) => {
        if (!isOutboxClosed(err)) this.deps.storage.failed(err);
        if (!stopped.has(turnId)) stopped.set(turnId, end);
      };
      this.deps.outbox.durable(
        end,
        (s) => this.tell(s, { correlationId: turnId }),
        failed,
        () => this.deps.unendedInLog(turnId),
      );
    }
  }
}
