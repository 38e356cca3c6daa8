/**
 * The agent's session service: the handler of every `agent.*` command on the bus.
 *
 * Contracts:
 * - Handlers are registered by `start()` and removed by `stop()`.
 * - A session is opened lazily on its first command: its log is read from the store once, then
 *   the history is folded event by event (per-turn work does not grow with the session's length).
 * - Every event of a turn carries the correlationId of the `agent.sendMessage` that queued it, and
 *   the sessionId (payload and bus meta). Durable events carry their own seq; transient ones
 *   (thinking, chunk, errors of discarded messages) the seq of the last durable event before them.
 * - `agent.reset` cancels the running turn and every queued one (each caller gets `agent.error`
 *   AGENT_ERROR with details.reason 'reset'), appends `reset`, emits `agent.reset`, and resolves
 *   once the next turn would see an empty history.
 * - `agent.openSession` opens the session here (as any session command does) and does nothing else:
 *   a cluster takes a session over with it.
 * - `agent.sendMessage` answers once the message is durable: one that waits behind a running turn
 *   is recorded first (`messageQueued`), so a session taken over from a dead owner runs it (see
 *   session.ts).
 * - `agent.cancel` ends the running turn with `agent.error` {AGENT_ERROR, 'turn cancelled',
 *   {reason:'cancelled'}} and a `turnFailed{cancelled:true}`; queued messages stay.
 * - Health is `degraded` from a failed append until an append succeeds or the store says its medium
 *   is back (`onRecovered`).
 * - A session idle for `evictAfterMs` (default 60 s) is dropped from memory (its log stays); 0 keeps
 *   them all. A dormant session so holds its machines (~18 KB) only while its conversation goes on;
 *   what stays is the store's cache of its latest events (SECURITY.md, "Caps per principal").
 * - At most `storage.maxSessionsInMemory` sessions are held: opening one more first drops the least
 *   recently used dormant ones (they reopen from their log when used again).
 * - `stop()` cancels running and queued turns (reason 'shutdown') and waits for their events to be stored.
 * - `onSessionClosed` hears of every session that leaves memory, after its last event is stored.
 * - `agent.deleteSession` is atomic against everything in flight. In the handler's first tick,
 *   before anything awaits, the session leaves the registry and is closed with `abandonLog`: its
 *   running turn is stopped (tool calls aborted; a call approved in the same tick never starts),
 *   its outbox drops every fact not yet handed to the store, and it answers no question. The store's
 *   delete is called only after the last append already handed over has settled (the store applies
 *   a session's operations in call order). Until the delete has settled, every other command of
 *   that session waits for it: an answer then finds no question (its NOT_FOUND), a listing of questions
 *   is empty, and any other command finds a new, empty session. So once the delete answered,
 *   nothing of the old session runs, nor is written to the store again.
 * - An answer (or a listing of questions) never keeps a session in memory that has no log.
 * - A tool call whose signal is already aborted (its turn was stopped) is never started.
 * - `drop()` (the session now belongs to another instance) writes nothing more to its log either.
 * - Export, import and fork work on the store (session-transfer.ts); a new session's id must be
 *   unknown here as well.
 */
import type { SessionEvent } from '../conversation/session-events.ts';
import type { ToolCallInput } from '../conversation/turn-contract.ts';
import { failedOutcome, toTurnError } from '../conversation/turn-steps.ts';
import type { Bus } from '../bus/bus.ts';
import type { SendMeta } from '../bus/envelope.ts';
import { createIdSource, isoNow, systemClock, type Clock, type IdSource } from '../clock.ts';
import type { AgentConfig } from '../config/schema.ts';
import { AppError } from '../errors/index.ts';
import type { LlmClient, Usage } from '../llm/types.ts';
import { createSampler } from './questions/sampling.ts';
import type { Logger } from '../log/index.ts';
import type { McpCommands, ModelTool, ModelToolOutcome } from '../tools/messages.ts';
import type { EventStore } from '../store/types.ts';
import { compareKeys, inRange } from '../store/session-range.ts';
import { toFrame, type AgentEvents, type AgentFrame } from './frames.ts';
import type { AgentCommands, SessionSummary } from './messages.ts';
import type { RegisterActor } from '../inspect/index.ts';
import { contextSettings } from './compaction/context.ts';
import { openSession, type CallHost, type Session } from './session/session.ts';
import { createSessionQuotas, refuseUnnamed, type SessionQuota } from './session/quota.ts';
import { createSessionTransfer } from './session/transfer.ts';
import { createStorageHealth } from './session/storage-health.ts';
import { createIdleDeletion } from './session/expiry.ts';
import { allowsEverything, createToolPolicy } from './questions/tool-policy.ts';
import { createArgsValidator } from '../tools/args-validator.ts';

/** The events that carry a session's usage totals (`usageTotal`), and how many stored sessions a listing reads them of at once. */
const USAGE_EVENTS = ['contextCompacted', 'assistantStep', 'response'] as const;
const USAGE_READS_AT_ONCE = 16;

/** The bus as the agent uses it: its own commands and events, and the tool calls it makes. */
export type AgentBus = Pick<
  Bus<AgentCommands & Pick<McpCommands, 'mcp.modelTools' | 'mcp.callModelTool'>, AgentEvents>,
  'handle' | 'execute' | 'emit'
>;

export interface AgentServiceOptions {
  config: Pick<AgentConfig, 'systemPrompt' | 'llm' | 'storage' | 'toolPolicy'>;
  bus: AgentBus;
  store: EventStore<SessionEvent>;
  llm: LlmClient;
  log: Logger;
  clock?: Clock;
  ids?: IdSource;
  /** Milliseconds an idle session stays in memory (default 60 s; 0 = never evicted). */
  evictAfterMs?: number;
  /** Redacts what a failed turn says before it is stored and sent (default: unchanged). */
  redact?: <T>(value: T) => T;
  /** Shows each session's actor to the inspector (as `turn:<sessionId>`). */
  registerActor?: RegisterActor;
  /** Told whenever a session leaves memory (evicted, deleted, dropped, shut down). */
  onSessionClosed?: (sessionId: string) => void;
  /** Ends a turn a session's log left open when it is opened (see SessionDeps); set where another instance may have died mid-turn. */
  orphanedTurnReason?: string;
}

export interface AgentService {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Drops dormant sessions idle for evictAfterMs (by the clock); runs by itself every min(evictAfterMs, 60 s). */
  sweep(): void;
  /** Whether the session is in memory (or opening). */
  holds(sessionId: string): boolean;
  /**
   * Takes a session out of memory now, cancelling its turns with `reason`: its log now belongs to
   * another instance, so nothing more is written to it from here (it stays as it is).
   */
  drop(sessionId: string, reason: string): Promise<void>;
}

interface Slot {
  opening: Promise<Session>;
  session?: Session;
}

export function createAgentService(opts: AgentServiceOptions): AgentService {
  const { bus, store, llm, log, config } = opts;
  const clock = opts.clock ?? systemClock;
  const ids = opts.ids ?? createIdSource();
  const evictAfterMs = opts.evictAfterMs ?? 60_000;
  const slots = new Map<string, Slot>();
  /** Sessions being deleted: every command of theirs waits for this (see the contracts). */
  const deleting = new Map<string, Promise<unknown>>();
  const quotas = createSessionQuotas(store);
  const toolPolicy = allowsEverything(config.toolPolicy) ? undefined : createToolPolicy(config.toolPolicy);
  /** Checks answers to elicitations (its compiled schemas are cached per schema object). */
  const validate = createArgsValidator(log);
  const unregister: (() => void)[] = [];
  let sweeper: NodeJS.Timeout | undefined;
  let stopping = false;
  let toolsWarned = false;

  const listTools = async (): Promise<ModelTool[]> => {
    try {
      return await bus.execute('mcp.modelTools', {});
    } catch (err) {
      if (!toolsWarned) log.warn({ err }, 'tool catalogue unavailable; the model gets no tools');
      toolsWarned = true;
      return [];
    }
  };

  const callTool = async (input: ToolCallInput, signal: AbortSignal, host?: CallHost): Promise<ModelToolOutcome> => {
    const started = clock.now();
    try {
      const progress = { sessionId: input.key.sessionId, turnId: input.key.turnId, callId: input.callId };
      const elicit = host && { sessionId: input.key.sessionId, elicit: host.elicit };
      const sampler =
        host &&
        createSampler(
          { llm, maxOutputTokens: config.llm.maxOutputTokens, log },
          { ...progress, signal, host: host.sampling },
        );
      return await bus.execute(
        'mcp.callModelTool',
        {
          name: input.name,
          args: input.args,
          signal,
          hops: input.key.hops + 1,
          progress,
          ...(sampler && { sampler }),
          ...(elicit && { elicit }),
        },
        input.key,
      );
    } catch (err) {
      const call = { name: input.name, toolName: input.name, serverId: '' };
      return failedOutcome(call, toTurnError(err).message, clock.now() - started);
    }
  };

  /** Degraded from a failed append until one succeeds again (storage-health.ts). */
  const storage = createStorageHealth(clock);
  const transfer = createSessionTransfer({ store, clock, inUse: (id) => slots.has(id) || deleting.has(id) });
  store.onRecovered?.(() => storage.ok());

  const publish = (frame: AgentFrame, meta: SendMeta): void => {
    bus.emit(`agent.${frame.event}`, frame.data, meta);
  };

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
    const slot: Slot = {
      opening: openSession({
        sessionId,
        systemPrompt: config.systemPrompt,
        maxIterations: config.llm.maxIterations,
        context: contextSettings(config.llm),
        budget: config.llm.budget,
        store,
        llm,
        log,
        clock,
        listTools,
        callTool,
        ...(toolPolicy && { toolPolicy }),
        approvalTimeoutMs: config.toolPolicy.timeoutMs,
        validate,
        publish,
        storage,
        redact: opts.redact ?? ((value) => value),
        ...(opts.registerActor && { registerActor: opts.registerActor }),
        ...(opts.orphanedTurnReason !== undefined && { orphanedTurnReason: opts.orphanedTurnReason }),
      }),
    };
    slots.set(sessionId, slot);
    slot.opening.then(
      (s) => (slot.session = s),
      () => {
        slots.delete(sessionId);
        opts.onSessionClosed?.(sessionId);
      },
    );
    return slot.opening;
  }

  /**
   * Runs `fn` on the open session, in the same tick as the check that it is not closed; one closed
   * meanwhile (evicted, deleted) is replaced by a fresh one. `releaseUnused`: a session with no log
   * and nothing in flight is taken out of memory again afterwards.
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
        if (releaseUnused && s.unused && slots.get(sessionId)?.session === s) evict(sessionId, s);
      }
    }
  }

  /** Drops least recently used dormant sessions until one more fits under maxSessionsInMemory. */
  function makeRoom(): void {
    for (const [id, slot] of slots) {
      if (slots.size < config.storage.maxSessionsInMemory) return;
      const s = slot.session;
      if (s?.dormant) evict(id, s);
    }
  }

  function evict(id: string, s: Session): void {
    slots.delete(id);
    s.close('evicted').then(
      () => opts.onSessionClosed?.(id),
      (err: unknown) => log.error({ err, sessionId: id }, 'evicting session failed'),
    );
  }

  /** Drops dormant sessions not touched for evictAfterMs. */
  function sweep(): void {
    const cutoff = clock.now() - evictAfterMs;
    for (const [id, slot] of slots) {
      const s = slot.session;
      if (s && s.dormant && s.lastActive <= cutoff) evict(id, s);
    }
  }

  /**
   * Takes a session out of memory and closes it. An open session is closed in the caller's tick
   * (synchronously, before this awaits anything); one still opening is closed once it has opened.
   */
  function closeSession(sessionId: string, reason: string, options: { abandonLog?: boolean } = {}): Promise<boolean> {
    const slot = slots.get(sessionId);
    if (!slot) return Promise.resolve(false);
    slots.delete(sessionId);
    const closing = async (s: Session | undefined) => {
      if (!s) return false;
      await s.close(reason, options);
      opts.onSessionClosed?.(sessionId);
      return true;
    };
    if (slot.session) return closing(slot.session);
    return slot.opening.then(closing, () => false);
  }

  /** Deletes a session (see the contracts): its registry entry goes and it is closed before this returns. */
  function deleteSession(sessionId: string): Promise<boolean> {
    const before = deleting.get(sessionId);
    const closed = closeSession(sessionId, 'deleted', { abandonLog: true });
    const run = async () => {
      await before?.catch(() => undefined);
      const wasOpen = await closed;
      const removed = await store.delete(sessionId);
      quotas.forget(sessionId);
      return removed || wasOpen;
    };
    const done = run();
    deleting.set(sessionId, done);
    const forget = () => {
      if (deleting.get(sessionId) === done) deleting.delete(sessionId);
    };
    done.then(forget, forget);
    return done;
  }

  const deleteIfIdle = createIdleDeletion({
    store,
    clock,
    held: (id) => (slots.has(id) ? (slots.get(id)?.session ?? 'opening') : undefined),
    remove: deleteSession,
  });

  /** Runs `create`, which makes the new session `sessionId`, within the creator's cap (its room is given back if it fails). */
  async function creating<T>(sessionId: string, quota: SessionQuota | undefined, create: () => Promise<T>): Promise<T> {
    if (!quota) return create();
    await quotas.ready(quota.holder, sessionId);
    quotas.admit(quota, sessionId);
    try {
      return await create();
    } catch (err) {
      quotas.forget(sessionId);
      throw err;
    }
  }

  /** A stored session's usage totals: the `usageTotal` of its latest event that carries one (none in logs older than it). */
  async function storedUsage(sessionId: string): Promise<Usage | undefined> {
    const e = (await store.latest(sessionId, USAGE_EVENTS))?.event;
    return e?.type === 'contextCompacted' || e?.type === 'assistantStep' || e?.type === 'response'
      ? e.usageTotal
      : undefined;
  }

  function register(): void {
    unregister.push(
      bus.handle('agent.sendMessage', async ({ payload, correlationId }) => {
        const { sessionId, quota } = payload;
        const turnId = payload.turnId ?? ids();
        const message = {
          turnId,
          correlationId,
          content: payload.content,
          ...(payload.image && { image: payload.image }),
          ...(payload.hops !== undefined && { hops: payload.hops }),
          ...(payload.attached && { attached: payload.attached }),
          ...(payload.clientTools && { clientTools: payload.clientTools }),
        };
        if (quota) await quotas.ready(quota.holder, sessionId);
        let creates = false;
        try {
          return await withSession(sessionId, (s) => {
            if (s.unused && !payload.unnamed) refuseUnnamed(sessionId);
            creates = quota !== undefined && s.unused;
            if (quota && creates) quotas.admit(quota, sessionId);
            return s.send(message); // queued in the session's tick, answered once durable
          });
        } catch (err) {
          if (creates && !(await store.has(sessionId).catch(() => true))) quotas.forget(sessionId); // never created
          throw err;
        }
      }),
      bus.handle('agent.reset', async ({ payload, correlationId }) => {
        return { seq: await withSession(payload.sessionId, (s) => s.reset(correlationId)) };
      }),
      bus.handle('agent.compact', async ({ payload, correlationId }) => {
        const { sessionId } = payload;
        const stored = await withSession(sessionId, (s) => s.compact(correlationId));
        if (stored?.event.type !== 'contextCompacted') return { sessionId, compacted: false };
        const { method, upToSeq, tokensBefore, tokensAfter } = stored.event;
        return { sessionId, compacted: true, seq: stored.seq, method, upToSeq, tokensBefore, tokensAfter };
      }),
      bus.handle('agent.cancel', async ({ payload }) => {
        const slot = slots.get(payload.sessionId);
        if (slot?.session) return { cancelled: slot.session.cancel() }; // in the caller's tick
        const s = slot && (await slot.opening.catch(() => undefined));
        return { cancelled: s?.cancel() ?? false };
      }),
      bus.handle('agent.openSession', async ({ payload }) => {
        await withSession(payload.sessionId, () => undefined);
        return { opened: true as const };
      }),
      bus.handle('agent.questions', ({ payload }) => withSession(payload.sessionId, (s) => s.questions(), true)),
      bus.handle('agent.answer', ({ payload: { sessionId, ...answer } }) =>
        withSession(sessionId, (s) => s.answer(answer), true),
      ),
      bus.handle('agent.listSessions', async ({ payload: { range } }) => {
        const stored = await store.list(range);
        const byId = new Map<string, SessionSummary>();
        for (const info of stored) byId.set(info.id, { ...info, busy: false, queued: 0 });
        // Sessions busy in memory with nothing stored yet join the page where they sort; past a full
        // page of stored ones, a later page lists them.
        const full = range?.limit !== undefined && stored.length >= range.limit;
        const last = stored.at(-1)?.id;
        const joins = (id: string) => inRange(id, range) && (!full || last === undefined || compareKeys(id, last) < 0);
        for (const [id, slot] of slots) {
          const s = slot.session;
          if (!s) continue;
          const known = byId.get(id);
          if (!known && ((!s.busy && s.queued === 0) || !joins(id))) continue;
          byId.set(id, {
            ...(known ?? { id, lastSeq: 0, updatedAt: isoNow(clock) }),
            busy: s.busy,
            queued: s.queued,
            usage: s.usage,
          });
        }
        const page = [...byId.values()].sort((a, b) => compareKeys(a.id, b.id)).slice(0, range?.limit);
        const unloaded = page.filter((info) => !slots.get(info.id)?.session);
        for (let i = 0; i < unloaded.length; i += USAGE_READS_AT_ONCE) {
          await Promise.all(
            unloaded.slice(i, i + USAGE_READS_AT_ONCE).map(async (summary) => {
              const usage = await storedUsage(summary.id);
              if (usage) summary.usage = usage;
            }),
          );
        }
        return page;
      }),
      bus.handle('agent.sessionExists', async ({ payload }) => ({ exists: await store.has(payload.sessionId) })),
      bus.handle('agent.history', async ({ payload }) => {
        const since = payload.since ?? 0;
        const stored = await store.read(payload.sessionId, since);
        const frames = stored.map(toFrame).filter((f) => f !== undefined);
        return { frames, lastSeq: stored.at(-1)?.seq ?? since };
      }),
      bus.handle('agent.health', () => storage.current()),
      bus.handle('agent.deleteSession', async ({ payload: { sessionId, ifIdleForMs } }) => ({
        deleted: await (ifIdleForMs === undefined ? deleteSession(sessionId) : deleteIfIdle(sessionId, ifIdleForMs)),
      })),
      bus.handle('agent.exportSession', ({ payload }) => transfer.exportLog(payload.sessionId)),
      bus.handle('agent.importSession', ({ payload }) =>
        creating(payload.newSessionId, payload.quota, () => transfer.importLog(payload.newSessionId, payload.events)),
      ),
      bus.handle('agent.forkSession', ({ payload }) =>
        creating(payload.newSessionId, payload.quota, () =>
          transfer.fork(payload.sessionId, payload.seq, payload.newSessionId),
        ),
      ),
    );
  }

  return {
    start() {
      if (unregister.length > 0) return Promise.resolve();
      stopping = false;
      register();
      if (evictAfterMs > 0) {
        sweeper = setInterval(sweep, Math.min(evictAfterMs, 60_000));
        sweeper.unref();
      }
      return Promise.resolve();
    },
    async stop() {
      stopping = true;
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
      for (const off of unregister.splice(0)) off();
      await Promise.allSettled([...deleting.values()]);
      const ids = [...slots.keys()];
      await Promise.all(ids.map((id) => closeSession(id, 'shutdown')));
    },
    sweep,
    holds: (sessionId) => slots.has(sessionId),
    async drop(sessionId, reason) {
      await closeSession(sessionId, reason, { abandonLog: true });
    },
  };
}
