/**
 * The agent's session service: the handler of every `agent.*` bus command (command-handlers.ts) over the sessions held
 * in memory (session-registry.ts).
 * `stop()` removes the handlers, cancels running and queued turns (reason 'shutdown') and waits for their events to
 * be stored. Health (`agent.health`) also degrades when the store says its medium is lost, and recovers when it is back.
 */
import { registerAppCalls, type AppCallDeps } from './app-calls.ts';
import type { SendMeta } from '../bus/envelope.ts';
import { createIdSource, systemClock, type Clock, type IdSource } from '../clock.ts';
import type { AgentConfig } from '../config/schema.ts';
import type { Logger } from '../log/index.ts';
import { createArgsValidator } from '../tools/args-validator.ts';
import { registerCommandHandlers, type AgentBus } from './command-handlers.ts';
import { contextSettings } from './compaction/context.ts';
import { STORED_EVENT, type Published, type SessionStoredEvent } from './frames.ts';
import type { Reactions } from './react/reactions.ts';
import { allowsEverything, createToolPolicy } from './questions/tool-policy.ts';
import { createSessionRegistry } from './session-registry.ts';
import { createIdleDeletion } from './session/expiry.ts';
import { createSessionQuotas } from './session/quota.ts';
import { openSession } from './session/session.ts';
import type { SessionDeps } from './session/types.ts';
import { createStorageHealth } from './session/storage-health.ts';
import { storeLossOf } from './store-lost.ts';
import { createSessionTransfer } from './session/transfer.ts';
import { createToolPort } from './tool-port.ts';
import type { MemoryPort } from './memory-port.ts';
import type { SpendPort } from './session/spend-check.ts';
import { isSessionKey, splitSessionKey } from '../session-id.ts';

/** `orphanedTurnReason`: set where another instance may have died; `resumeTurns`: the bound on resuming a turn. */
export interface AgentServiceOptions extends Pick<
  SessionDeps,
  'store' | 'llm' | 'log' | 'registerActor' | 'orphanedTurnReason' | 'resumeTurns'
> {
  config: Pick<AgentConfig, 'systemPrompt' | 'llm' | 'storage' | 'toolPolicy' | 'toolResultMaxBytes'>;
  bus: AgentBus;
  clock?: Clock;
  ids?: IdSource;
  /** Milliseconds an idle session stays in memory (default 60 s; 0 = never evicted). */
  evictAfterMs?: number;
  /** Redacts what a failed turn says before it is stored and sent (default: unchanged). */
  redact?: <T>(value: T) => T;
  /** Told whenever a session leaves memory (evicted, deleted, dropped, shut down). */
  onSessionClosed?: (sessionId: string) => void;
  /** Told once a session and its log were deleted by this instance (webhooks' `session.deleted`). */
  onSessionDeleted?: (sessionId: string) => void;
  /** Memory per principal (issue 62), when `memory:` is on: the model's memory tools and working memory. */
  memory?: MemoryPort;
  /** What reacts to stored facts (webhooks, A2A push), with its checkpoints on the sessions' medium (src/agent/react). */
  reactions?: Reactions;
  /** Spending limits (`budgets`, src/spend), checked before each model step. */
  spend?: SpendPort;
  /**
   * Where several instances share the store (Redis): this instance's fencing token for a session whose lease it holds
   * (undefined: it holds none). A session takes its token as it opens; its writes carry it (SessionDeps `fence`).
   */
  fenceOf?: (sessionId: string) => number | undefined;
  /**
   * A turn's model step lists the tools only once the tool servers were attempted (`resumeLeftRunning()` says so):
   * a message sent during start-up waits for its tools instead of running without them.
   */
  waitForToolServers?: boolean;
  /** MCP Apps' calls of tools (app-calls.ts): the follower of their turns, and how long a caller waits for one. */
  appCalls?: Pick<AppCallDeps, 'follower' | 'timeoutMs'>;
}

export type AgentService = ReturnType<typeof createAgentService>;

/**
 * Where turns resume: the store's marks of open turns (they find the turns a restart left running), and the sessions
 * holding one opened once the tool servers were attempted. A session opened before (a request during start-up) waits
 * for `resumeLeftRunning()` to settle its open turn (`toolsAttempted`, SessionDeps).
 */
function turnResumption(store: AgentServiceOptions['store'], bus: AgentServiceOptions['bus'], log: Logger) {
  let toolsWereAttempted = () => {};
  const toolsAttempted = new Promise<void>((resolve) => (toolsWereAttempted = resolve));
  const openLeftRunning = async () => {
    const ids = (await store.openTurnSessions?.()) ?? [];
    if (ids.length > 0) log.info({ sessions: ids.length }, 'opening the sessions whose turns a restart left running');
    for (const id of ids) {
      if (!isSessionKey(id)) continue;
      await bus
        .execute('agent.openSession', { sessionId: id })
        .catch((err: unknown) => log.warn({ err, sessionId: id }, 'opening a session with an open turn failed'));
    }
  };
  return {
    marker: (sessionId: string) => async (open: boolean) =>
      await store
        .markOpenTurn?.(sessionId, open)
        .catch((err: unknown) => log.warn({ err, sessionId, open }, 'marking an open turn failed')),
    toolsAttempted,
    toolsWereAttempted,
    /** `list` once the tool servers were attempted (at once from then on: no promise to wait for). */
    onceAttempted<T>(list: () => Promise<T>): () => Promise<T> {
      let attempted = false;
      void toolsAttempted.then(() => (attempted = true));
      return async () => (attempted ? list() : (await toolsAttempted, list()));
    },
    resumeLeftRunning(): void {
      void openLeftRunning().catch((err: unknown) => log.warn({ err }, 'finding open turns failed'));
    },
  };
}

/**
 * The agent's storage health, told by the store's medium watch; back from an outage, each session in memory stores
 * the end of a turn the outage stopped (output.ts) at once, not at its next use.
 */
function watchedStorage(
  store: AgentServiceOptions['store'],
  clock: Clock,
  slots: () => Iterable<{ session?: { storageBack(): void } }>,
) {
  const storage = createStorageHealth(clock);
  const back = () => {
    storage.ok();
    for (const slot of slots()) slot.session?.storageBack();
  };
  store.watchMedium?.({ lost: (err) => storage.failed(err), back });
  return storage;
}

/** The seqs of a session's stored facts as `bus` carries them (SessionDeps `factsOnBus`). */
const factsOnBus =
  (bus: AgentBus, sessionId: string) =>
  (heard: (seq: number) => void): (() => void) =>
    bus.onSession(sessionId, (e) => {
      if (e.name === STORED_EVENT) heard((e.payload as SessionStoredEvent).seq);
    });

export function createAgentService(opts: AgentServiceOptions) {
  const { bus, store, llm, log, config } = opts;
  const clock = opts.clock ?? systemClock;
  const ids = opts.ids ?? createIdSource();
  const quotas = createSessionQuotas(store);
  const toolPolicy = allowsEverything(config.toolPolicy) ? undefined : createToolPolicy(config.toolPolicy);
  const validate = createArgsValidator(log);
  const memory = opts.memory;
  const { listTools, callTool } = createToolPort({
    ...{ bus, llm, log, clock },
    maxOutputTokens: config.llm.maxOutputTokens,
    ...(memory && { memory: { port: memory, maxResultBytes: config.toolResultMaxBytes } }),
  });
  const unregister: (() => void)[] = [];
  const storage = watchedStorage(store, clock, () => sessions.slots.values());

  /** Made once per frame name: a chunk builds (and hashes) no new string. */
  const busNames = new Map<Published['event'], `agent.${Published['event']}`>();
  const publish = (frame: Published, meta: SendMeta): void => {
    let name = busNames.get(frame.event);
    if (name === undefined) busNames.set(frame.event, (name = `agent.${frame.event}`));
    bus.emit(name, frame.data, meta);
  };

  const resumption = turnResumption(store, bus, log);

  const sessions = createSessionRegistry({
    open: (sessionId) =>
      openSession({
        sessionId,
        systemPrompt: config.systemPrompt,
        ...(memory && {
          workingMemory: () => memory.workingMemory(splitSessionKey(sessionId).owner),
        }),
        maxIterations: config.llm.maxIterations,
        context: contextSettings(config.llm),
        budget: config.llm.budget,
        store,
        llm,
        log,
        clock,
        listTools: opts.waitForToolServers ? resumption.onceAttempted(listTools) : listTools,
        callTool,
        ...(toolPolicy && { toolPolicy }),
        approvalTimeoutMs: config.toolPolicy.timeoutMs,
        validate,
        maxResultBytes: config.toolResultMaxBytes,
        publish,
        factsOnBus: factsOnBus(bus, sessionId),
        storage,
        ...(opts.reactions && { reactions: opts.reactions.forSession(sessionId) }),
        ...(opts.spend && { spend: opts.spend }),
        ...(opts.fenceOf && {
          fence: opts.fenceOf(sessionId) ?? 0, // no lease: 0, a token no store accepts
          fenced: () => void sessions.closeSession(sessionId, 'moved', { abandonLog: true }),
        }),
        redact: opts.redact ?? ((value) => value),
        ...(opts.registerActor && { registerActor: opts.registerActor }),
        ...(opts.orphanedTurnReason !== undefined && { orphanedTurnReason: opts.orphanedTurnReason }),
        ...(opts.resumeTurns !== undefined && {
          resumeTurns: opts.resumeTurns,
          markOpenTurn: resumption.marker(sessionId),
          toolsAttempted: resumption.toolsAttempted,
        }),
      }),
    store,
    quotas,
    clock,
    log,
    maxSessionsInMemory: config.storage.maxSessionsInMemory,
    evictAfterMs: opts.evictAfterMs ?? 60_000,
    ...(opts.onSessionClosed && { onSessionClosed: opts.onSessionClosed }),
  });
  const transfer = createSessionTransfer({ store, clock, inUse: sessions.inUse });
  const deleteIfIdle = createIdleDeletion({
    store,
    clock,
    held: (id) => (sessions.slots.has(id) ? (sessions.slots.get(id)?.session ?? 'opening') : undefined),
    remove: sessions.deleteSession,
  });

  return {
    start(): Promise<void> {
      if (unregister.length > 0) return Promise.resolve();
      unregister.push(
        ...registerCommandHandlers({
          ...{ bus, store, clock, ids, sessions, quotas, storage, transfer, deleteIfIdle },
          onSessionDeleted: (sessionId: string) => {
            opts.onSessionDeleted?.(sessionId);
            opts.reactions
              ?.forget(sessionId)
              .catch((err: unknown) => log.warn({ err, sessionId }, 'a deleted session kept its reaction checkpoint'));
          },
        }),
        ...registerAppCalls({ ...opts.appCalls, bus, store, ids, log, withSession: sessions.withSession }),
      );
      sessions.start();
      return Promise.resolve();
    },
    /**
     * Called once the tool servers were attempted: turns waiting for their tools (`waitForToolServers`) list them now,
     * and (when turns resume) every session the store marks with a turn open is opened, so the turns a restart left
     * running go on without waiting for a command (a resumed call needs its server). A session opened before (a
     * request during start-up) waits for this call to settle its open turn.
     */
    resumeLeftRunning(): void {
      if (unregister.length === 0) return;
      resumption.toolsWereAttempted();
      if (opts.resumeTurns !== undefined) resumption.resumeLeftRunning();
    },
    async stop(): Promise<void> {
      for (const off of unregister.splice(0)) off();
      await sessions.stop();
    },
    /** Drops dormant sessions idle for evictAfterMs (by the clock); runs by itself every min(evictAfterMs, 60 s). */
    sweep: sessions.sweep,
    /** Whether the session is in memory (or opening). */
    holds: (sessionId: string): boolean => sessions.slots.has(sessionId),
    /** Takes a session out of memory now, cancelling its turns with `reason`; its log (another instance's now) stays. */
    drop: async (sessionId: string, reason: string): Promise<void> =>
      void (await sessions.closeSession(sessionId, reason, { abandonLog: true })),
    /** Lets a dormant session leave memory (so another instance may take it); false when it is not dormant here. */
    release: sessions.release,
    /**
     * The store lost data (src/app/store-loss.ts): health is degraded (`storage: <cause>`) until `storeRecovered()`,
     * every session leaves memory now (its turns stop; read back from the store at its next use), answering what each
     * held; `failHeldTurns` then ends those turns where their log still holds them unended (store-lost.ts).
     */
    ...storeLossOf({ storage, sessions, fenceOf: opts.fenceOf, store, log }),
  };
}
