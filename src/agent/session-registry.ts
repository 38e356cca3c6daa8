/**
 * The sessions this instance holds in memory, by id; each opens on its first use (`withSession`).
 * - A session idle for `evictAfterMs` (0: never) leaves memory (its log stays); opening one past `maxSessionsInMemory`
 *   first drops the least recently used dormant ones. `onSessionClosed` hears of every session that leaves memory,
 *   after its last event is stored.
 * - `deleteSession` closes the session (`abandonLog`) in the caller's tick, then deletes its log once the appends
 *   already handed over settled; until then every use of that id waits, then finds a new, empty session.
 * - After `stop()` (running and queued turns cancelled, their events stored) no session opens.
 */
import type { Clock } from '../clock.ts';
import type { SessionEvent } from '../conversation/session-events.ts';
import { AppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import type { EventStore } from '../store/types.ts';
import type { SessionQuotas } from './session/quota.ts';
import type { Session } from './session/session.ts';

export interface SessionSlot {
  opening: Promise<Session>;
  session?: Session;
}

export interface SessionRegistryDeps {
  open(sessionId: string): Promise<Session>;
  store: Pick<EventStore<SessionEvent>, 'delete'>;
  quotas: Pick<SessionQuotas, 'forget'>;
  clock: Clock;
  log: Logger;
  maxSessionsInMemory: number;
  evictAfterMs: number;
  onSessionClosed?: (sessionId: string) => void;
}

/** `fn` on the slot's session: at once when it is open, else once it has opened; false when it never opens. */
function whenOpened(slot: SessionSlot, fn: (s: Session) => Promise<boolean>): Promise<boolean> {
  if (slot.session) return fn(slot.session);
  return slot.opening.then(fn, () => false);
}

/** Keeps `done` in `pending` under `id` until it settles (unless a later one took its place there); returns it. */
function holdUntilSettled<T>(pending: Map<string, Promise<unknown>>, id: string, done: Promise<T>): Promise<T> {
  pending.set(id, done);
  const forget = () => {
    if (pending.get(id) === done) pending.delete(id);
  };
  done.then(forget, forget);
  return done;
}

/** A timer sweeping every `evictAfterMs` (at least once a minute) that does not hold the process open; none for 0. */
function startSweeper(sweep: () => void, evictAfterMs: number): NodeJS.Timeout | undefined {
  if (evictAfterMs <= 0) return undefined;
  const timer = setInterval(sweep, Math.min(evictAfterMs, 60_000));
  timer.unref();
  return timer;
}

export function createSessionRegistry(deps: SessionRegistryDeps) {
  const { clock, log, evictAfterMs } = deps;
  const slots = new Map<string, SessionSlot>();
  const deleting = new Map<string, Promise<unknown>>();
  let sweeper: NodeJS.Timeout | undefined;
  let stopping = false;

  function session(sessionId: string): Promise<Session> {
    if (stopping) return Promise.reject(new AppError('SERVICE_UNAVAILABLE', 'Agent is shutting down'));
    const gone = deleting.get(sessionId);
    if (gone)
      return gone.then(
        () => session(sessionId),
        () => session(sessionId),
      );
    const existing = slots.get(sessionId);
    if (existing) {
      slots.delete(sessionId); // most recently used last
      slots.set(sessionId, existing);
      return existing.opening;
    }
    makeRoom();
    const slot: SessionSlot = { opening: deps.open(sessionId) };
    slots.set(sessionId, slot);
    slot.opening.then(
      (s) => (slot.session = s),
      () => {
        slots.delete(sessionId);
        deps.onSessionClosed?.(sessionId);
      },
    );
    return slot.opening;
  }

  /**
   * Runs `fn` on the open session in the same tick as the check that it is not closed (one closed meanwhile is
   * replaced). `releaseUnused`: a session with no log and nothing in flight leaves memory again afterwards.
   */
  async function withSession<T>(sessionId: string, fn: (s: Session) => T, releaseUnused = false): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const s = await session(sessionId);
      if (s.closed && attempt < 3) {
        if (slots.get(sessionId)?.session === s) slots.delete(sessionId);
        continue;
      }
      try {
        return fn(s);
      } finally {
        if (releaseUnused && s.unused && slots.get(sessionId)?.session === s) void evict(sessionId, s);
      }
    }
  }

  /** Drops least recently used dormant sessions until one more fits. */
  function makeRoom(): void {
    for (const [id, slot] of slots) {
      if (slots.size < deps.maxSessionsInMemory) return;
      const s = slot.session;
      if (s?.dormant) void evict(id, s);
    }
  }

  /** Resolves once closed and `onSessionClosed` heard (a failed close is logged). */
  function evict(id: string, s: Session): Promise<void> {
    slots.delete(id);
    return s.close('evicted').then(
      () => deps.onSessionClosed?.(id),
      (err: unknown) => log.error({ err, sessionId: id }, 'evicting session failed'),
    );
  }

  function sweep(): void {
    const cutoff = clock.now() - evictAfterMs;
    for (const [id, slot] of slots) {
      const s = slot.session;
      if (s && s.dormant && s.lastActive <= cutoff) void evict(id, s);
    }
  }

  /** Lets a dormant session leave memory as an evicted one does (its `onSessionClosed` heard); false when not dormant here. */
  async function release(sessionId: string): Promise<boolean> {
    const s = slots.get(sessionId)?.session;
    if (!s?.dormant) return false;
    await evict(sessionId, s);
    return true;
  }

  /** Takes a session out of memory and closes it: in the caller's tick when open, else once it has opened. */
  function closeSession(sessionId: string, reason: string, options: { abandonLog?: boolean } = {}): Promise<boolean> {
    const slot = slots.get(sessionId);
    if (!slot) return Promise.resolve(false);
    slots.delete(sessionId);
    return whenOpened(slot, async (s) => {
      await s.close(reason, options);
      deps.onSessionClosed?.(sessionId);
      return true;
    });
  }

  function deleteSession(sessionId: string): Promise<boolean> {
    const before = deleting.get(sessionId);
    const closed = closeSession(sessionId, 'deleted', { abandonLog: true });
    const run = async () => {
      await before?.catch(() => undefined);
      const wasOpen = await closed;
      const removed = await deps.store.delete(sessionId);
      deps.quotas.forget(sessionId);
      return removed || wasOpen;
    };
    return holdUntilSettled(deleting, sessionId, run());
  }

  return {
    slots: slots as ReadonlyMap<string, SessionSlot>,
    withSession,
    closeSession,
    deleteSession,
    release,
    sweep,
    /** Whether the id is held here or being deleted (a new session may not take it). */
    inUse: (sessionId: string) => slots.has(sessionId) || deleting.has(sessionId),
    start(): void {
      stopping = false;
      sweeper = startSweeper(sweep, evictAfterMs);
    },
    /** Refuses new sessions at once, waits for deletes in flight, then closes every session (reason 'shutdown'). */
    async stop(): Promise<void> {
      stopping = true;
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
      await Promise.allSettled([...deleting.values()]);
      await Promise.all([...slots.keys()].map((id) => closeSession(id, 'shutdown')));
    },
  };
}

export type SessionRegistry = ReturnType<typeof createSessionRegistry>;
