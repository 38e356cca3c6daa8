/**
 * Reactions: what happens after a fact is stored (webhooks, A2A push, the spend ledger, a schedule fire's end), run
 * from the log with checkpoints, as Emmett's reactors are; each feature's mount brings its own
 * (src/http/feature-mount.ts) and createApp hands them all here. A reaction (`name`, `handle(stored)`) hears each
 * stored fact of a session at least once, in the session's order, on the instance that owns the session, apart from
 * the others (one that fails a fact holds back only itself):
 * - **Live**: each fact the session stores is handed on (`stored`), after those before it were handled.
 * - **Catch-up**: when a session opens (a restart, a takeover by the orphan sweep, any first use), the facts after
 *   each reaction's checkpoint are read from the log and handled before the live ones. A session with no checkpoint
 *   is caught up from the first fact stored since reactions came to this medium (`reactions-start`), among those the
 *   open read (the log since its last compaction: nothing more is read), so an old log is never announced again.
 * - **Checkpoints** (`{ seqs: { <reaction>: seq } }` per session, on the sessions' medium through the record store)
 *   are written once a turn's facts were handled when a reaction acted (its `handle` answered `true`: it wrote
 *   something), at most every CHECKPOINT_EVERY_MS per session, and when the session closes if they moved: a turn
 *   nothing reacted to writes nothing. A fact is handed on again only after a crash between its store and its
 *   checkpoint (at most those few seconds of facts): `handle` is idempotent per fact (its deliveries' ids derive from
 *   the fact), so nothing is sent twice.
 * - A checkpoint only moves forward (checkpoint.ts): written conditioned on the version last read, a newer one
 *   (another owner's, after a takeover) is never written over, and what it covers is not handed on here again.
 * - A `handle` that throws is logged; the reaction's checkpoint stays before that fact and it handles nothing more
 *   until it is tried again from there, by reading the log: before the session's next fact is handed on, at
 *   `retry()` (the store says its medium is back), or at the next open. `settled()` resolves once every fact handed
 *   on so far was handled and the checkpoint they moved is written: the session's open-turn mark, which sends a
 *   restart here, is removed only then.
 */
import { z } from 'zod';
import type { Logger } from '../../log/index.ts';
import { records, type StoreEvent, type StoredEvent } from '../../store/index.ts';
import type { SessionStoredEvent } from '../frames.ts';
import { checkpointSchema, sessionCheckpoint, type SessionCheckpoint } from './checkpoint.ts';

export interface Reaction {
  /** Names its checkpoint: keep it across releases. */
  readonly name: string;
  /** Handles one fact; `true` when it acted (wrote something a crash must not lose). Idempotent per fact. */
  handle(stored: SessionStoredEvent): Promise<boolean> | boolean;
}

/** One session's side of the reactions (what the session calls). */
export interface SessionReactions {
  /**
   * Catches up from the checkpoints before any live fact is handled: `loaded` is what the session read at open (its
   * log from some seq to `lastSeq`), `read(since)` reads what lies before it when a checkpoint is older.
   */
  catchUp(opened: OpenedLog): void;
  /** A fact the session stored (in its order). */
  stored(stored: SessionStoredEvent): void;
  /**
   * Resolves once everything handed on was handled and the checkpoint it moved is written, including what is handed
   * on while it waits (a caller may ask before the fact it cares about is handed on, in the same tick): true when every
   * reaction is up to date, false when one is stuck on a fact it failed (the next open retries it). Never rejects.
   */
  settled(): Promise<boolean>;
  /** Tries the reactions stuck on a fact they failed again, from the log (the store says its medium is back). */
  retry(): void;
  /** Settles, then writes the checkpoint if it moved since the last write. */
  close(): Promise<void>;
}

/** What a session read of its log when it opened. */
export interface OpenedLog {
  loaded: readonly SessionStoredEvent[];
  lastSeq: number;
  read: (since: number) => Promise<StoredEvent<StoreEvent>[]>;
}

/** The facts after `since`: from what was loaded when it covers them, else read. */
async function factsAfter({ loaded, read }: OpenedLog, since: number): Promise<SessionStoredEvent[]> {
  const first = loaded[0]?.seq;
  if (first !== undefined && first <= since + 1) return loaded.filter((s) => s.seq > since);
  return (await read(since)) as SessionStoredEvent[];
}

const CHECKPOINTS = 'reaction-checkpoints';
const START = 'reaction-start';
const startSchema = z.object({ at: z.number() });

/** The longest a session's checkpoint lags its reactions while they act (a busy session writes it this often). */
const CHECKPOINT_EVERY_MS = 5_000;

const endsTurn = (s: SessionStoredEvent) => s.event.type === 'response' || s.event.type === 'turnFailed';

export interface ReactionsDeps {
  reactions: readonly Reaction[];
  records: records.RecordStore;
  log: Logger;
  now: () => number;
}

/** What every session's reactions share (one per service). */
interface Shared extends ReactionsDeps {
  checkpoints: records.Collection<{ seqs: Record<string, number> }>;
  /** When reactions came to this medium (see `createReactions`). */
  reactionsStart(at?: number): Promise<number>;
}

export function createReactions(deps: ReactionsDeps) {
  const { reactions, log } = deps;
  const checkpoints = records.collection(deps.records, { ns: CHECKPOINTS, schema: checkpointSchema, log });
  const starts = records.collection(deps.records, { ns: START, schema: startSchema, log });
  let startedAt: Promise<number> | undefined;
  /** When reactions came to this medium: the first instance to ask records it. */
  const reactionsStart = (at = deps.now()) => {
    startedAt ??= (async () => {
      await starts.put('start', { at }, { ifVersion: 0 });
      return (await starts.get('start'))?.value.at ?? 0;
    })();
    startedAt.catch(() => (startedAt = undefined)); // asked again next time
    return startedAt;
  };
  const shared: Shared = { ...deps, checkpoints, reactionsStart };

  return {
    forSession: (sessionId: string): SessionReactions => new ReactionsOfSession(shared, sessionId),
    /** The session was deleted: its checkpoint goes with it. */
    forget: (sessionId: string): Promise<boolean> =>
      reactions.length === 0 ? Promise.resolve(false) : checkpoints.delete(sessionId),
  };
}
export type Reactions = ReturnType<typeof createReactions>;

/** One session's side of the reactions: its state in fields, its methods on the prototype. */
class ReactionsOfSession implements SessionReactions {
  /** Each reaction's last handled seq, and what was last written. */
  private readonly seqs: Record<string, number> = {};
  /** Reactions that failed a fact since the session opened: they handle nothing more until it opens again. */
  private readonly stuck = new Set<string>();
  private readonly checkpoint: SessionCheckpoint;
  /** When the checkpoint was last written (0: not by this open). */
  private writtenAt = 0;
  private acted = false;
  private chain: Promise<void> = Promise.resolve();
  /** Reads the session's log after a seq (from `catchUp`): what a retry reads. */
  private readLog: OpenedLog['read'] | undefined = undefined;
  private readonly shared: Shared;
  private readonly sessionId: string;

  constructor(shared: Shared, sessionId: string) {
    this.shared = shared;
    this.sessionId = sessionId;
    this.checkpoint = sessionCheckpoint(shared.checkpoints, sessionId);
  }

  catchUp(opened: OpenedLog): void {
    const { reactions } = this.shared;
    if (reactions.length === 0) return;
    this.readLog = opened.read;
    const { lastSeq } = opened;
    const seqs = this.seqs;
    this.queue(async () => {
      const kept = await this.checkpoint.read();
      // A reaction the checkpoint does not name yet starts now; with no checkpoint, at the reactions' start.
      for (const r of reactions) seqs[r.name] = kept ? (kept[r.name] ?? lastSeq) : 0;
      const since = Math.min(...reactions.map((r) => seqs[r.name] ?? 0));
      if (since >= lastSeq) return;
      let facts = kept ? await factsAfter(opened, since) : opened.loaded;
      if (!kept) {
        const start = await this.shared.reactionsStart();
        facts = facts.filter((f) => Date.parse(f.ts) >= start);
        const before = (facts[0]?.seq ?? lastSeq + 1) - 1; // what came before the start is not news
        for (const r of reactions) seqs[r.name] = before;
      }
      for (const s of facts) await this.handleOne(s);
      if (this.acted) await this.write();
    });
  }

  stored(s: SessionStoredEvent): void {
    const { reactions, log, now } = this.shared;
    if (reactions.length === 0) return;
    this.queue(async () => {
      try {
        await this.shared.reactionsStart(Date.parse(s.ts)); // recorded (once per medium) with the first fact it covers
      } catch (err) {
        log.error(
          { err, sessionId: this.sessionId, seq: s.seq },
          'reactions: the medium cannot be written; retried at the next open',
        );
        for (const r of reactions) this.stuck.add(r.name);
        return;
      }
      await this.unstick(s.seq);
      await this.handleOne(s);
      if (this.acted && endsTurn(s) && now() - this.writtenAt >= CHECKPOINT_EVERY_MS) await this.write();
    });
  }

  /** Waits until the chain stops growing: a fact handed on while waiting (the one just stored) is waited for too. */
  async settled(): Promise<boolean> {
    for (let seen = this.chain; ; seen = this.chain) {
      await seen;
      if (seen === this.chain) return this.stuck.size === 0;
    }
  }

  retry(): void {
    this.queue(() => this.unstick(Infinity));
  }

  async close(): Promise<void> {
    this.queue(() => this.write());
    await this.settled();
  }

  private queue(work: () => Promise<void>): void {
    this.chain = this.chain
      .then(work)
      .catch((err: unknown) => this.shared.log.error({ err, sessionId: this.sessionId }, 'reactions: a step failed'));
  }

  private async handleOne(s: SessionStoredEvent): Promise<void> {
    const { seqs, stuck } = this;
    for (const r of this.shared.reactions) {
      if (stuck.has(r.name) || (seqs[r.name] ?? 0) >= s.seq) continue;
      try {
        if (await r.handle(s)) this.acted = true;
        seqs[r.name] = s.seq;
      } catch (err) {
        this.shared.log.error(
          { err, sessionId: this.sessionId, reaction: r.name, seq: s.seq },
          'reactions: a fact was not handled; retried at the next open',
        );
        seqs[r.name] = Math.min(seqs[r.name] ?? 0, s.seq - 1);
        stuck.add(r.name);
      }
    }
  }

  private async write(): Promise<void> {
    if (await this.checkpoint.write(this.seqs)) [this.writtenAt, this.acted] = [this.shared.now(), false];
  }

  /** Hands on again, from the log, the facts before seq `until` that the stuck reactions did not handle. */
  private async unstick(until: number): Promise<void> {
    const { stuck, seqs, readLog } = this;
    if (stuck.size === 0 || !readLog) return;
    const since = Math.min(...[...stuck].map((name) => seqs[name] ?? 0));
    stuck.clear();
    try {
      const facts = (await readLog(since)) as SessionStoredEvent[];
      for (const s of facts) if (s.seq < until) await this.handleOne(s);
    } catch (err) {
      this.shared.log.error(
        { err, sessionId: this.sessionId },
        'reactions: the log could not be read to try a failed fact again',
      );
      for (const r of this.shared.reactions) if ((seqs[r.name] ?? 0) < until - 1) stuck.add(r.name);
    }
  }
}
