/**
 * The handlers of every `agent.*` bus command (their contracts: messages.ts), over the session registry.
 * An answer or a listing of questions never keeps a session without a log in memory. Export, import and fork work on
 * the store (session/transfer.ts); a new session's id must be unknown here as well.
 */
import type { Bus } from '../bus/bus.ts';
import type { Envelope } from '../bus/envelope.ts';
import { isoNow, type Clock, type IdSource } from '../clock.ts';
import { SESSION_EVENT_TYPES, type SessionEvent } from '../conversation/session-events.ts';
import type { Usage } from '../llm/types.ts';
import { compareKeys, inRange } from '../store/session-range.ts';
import type { EventStore } from '../store/types.ts';
import type { McpCommands } from '../tools/messages.ts';
import { toFrame, type AgentEvents } from './frames.ts';
import type { AgentCommands, SessionSummary } from './messages.ts';
import type { SessionRegistry } from './session-registry.ts';
import type { SessionQuota } from '../session-id.ts';
import { refuseUnnamed, type SessionQuotas } from './session/quota.ts';
import type { createStorageHealth } from './session/storage-health.ts';
import type { createSessionTransfer } from './session/transfer.ts';

/** A session's last seq (0: none), at the cost of its last event: the store's latest of every event type. */
export async function lastSeqOf(
  store: { latest(sessionId: string, types: readonly string[]): Promise<{ seq: number } | undefined> },
  sessionId: string,
): Promise<number> {
  return (await store.latest(sessionId, SESSION_EVENT_TYPES))?.seq ?? 0;
}
import { turnMessage } from './session/state.ts';

/** The events that carry a session's usage totals, and how many sessions a listing reads them of at once. */
const USAGE_EVENTS = ['contextCompacted', 'assistantStep', 'response'] as const;
const USAGE_READS_AT_ONCE = 16;

/** The bus as the agent uses it: its own commands and events, the tool calls it makes, and a session's events heard. */
export type AgentBus = Pick<
  Bus<AgentCommands & Pick<McpCommands, 'mcp.modelTools' | 'mcp.callModelTool'>, AgentEvents>,
  'handle' | 'execute' | 'emit'
> & { onSession(sessionId: string, listener: (event: Envelope) => unknown): () => void };

export interface CommandHandlerDeps {
  bus: AgentBus;
  store: EventStore<SessionEvent>;
  clock: Clock;
  ids: IdSource;
  sessions: SessionRegistry;
  quotas: SessionQuotas;
  storage: Pick<ReturnType<typeof createStorageHealth>, 'current'>;
  transfer: ReturnType<typeof createSessionTransfer>;
  deleteIfIdle: (sessionId: string, idleMs: number) => Promise<boolean>;
  /** Told once a session and its log were deleted here (`agent.deleteSession`). */
  onSessionDeleted?: ((sessionId: string) => void) | undefined;
}

/** Registers every handler; returns their unregister functions. */
export function registerCommandHandlers(deps: CommandHandlerDeps): (() => void)[] {
  const { bus, store, clock, ids, quotas, storage, transfer } = deps;
  const { slots, withSession } = deps.sessions;

  /** Runs `create` (which makes the session `sessionId`) within the creator's cap, giving the room back if it fails. */
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

  /** A stored session's usage totals: the `usageTotal` of its latest event that carries one. */
  async function storedUsage(sessionId: string): Promise<Usage | undefined> {
    const e = (await store.latest(sessionId, USAGE_EVENTS))?.event;
    return e && 'usageTotal' in e ? e.usageTotal : undefined;
  }

  return [
    bus.handle('agent.sendMessage', async ({ payload, correlationId }) => {
      const { sessionId, quota } = payload;
      const message = turnMessage(payload.turnId ?? ids(), correlationId, payload);
      // A turn id the caller names may be a retry's: the turn index says whether the log holds it (decide.ts).
      const stored =
        payload.turnId === undefined ? undefined : (await store.readTurn(sessionId, message.turnId)).length > 0;
      if (quota) await quotas.ready(quota.holder, sessionId);
      let creates = false;
      try {
        return await withSession(sessionId, (s) => {
          if (s.unused && !payload.unnamed) refuseUnnamed(sessionId);
          creates = quota !== undefined && s.unused;
          if (quota && creates) quotas.admit(quota, sessionId);
          return s.send(message, stored); // queued in the session's tick, answered once durable
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
      // Nothing after `since`: the log's own last seq (a `since` past its end, or an empty log, is not echoed).
      const last = stored.at(-1)?.seq ?? (since === 0 ? 0 : await lastSeqOf(store, payload.sessionId));
      return { frames, lastSeq: last };
    }),
    bus.handle('agent.toolApp', ({ payload }) => toolAppOf(store, payload)),
    bus.handle('agent.thread', async ({ payload }) => {
      const reset = await store.latest(payload.sessionId, ['reset']);
      return { facts: await store.read(payload.sessionId, reset?.seq ?? 0) };
    }),
    bus.handle('agent.health', () => storage.current()),
    bus.handle('agent.deleteSession', ({ payload }) => deleting(deps, payload)),
    bus.handle('agent.exportSession', ({ payload }) => transfer.exportLog(payload.sessionId)),
    bus.handle('agent.importSession', ({ payload }) =>
      creating(payload.newSessionId, payload.quota, () => transfer.importLog(payload.newSessionId, payload.events)),
    ),
    bus.handle('agent.forkSession', ({ payload }) =>
      creating(payload.newSessionId, payload.quota, () =>
        transfer.fork(payload.sessionId, payload.seq, payload.newSessionId),
      ),
    ),
  ];
}

/** `agent.toolApp`: the app of the call's last `toolResult` in the log. */
async function toolAppOf(
  store: EventStore<SessionEvent>,
  { sessionId, callId }: AgentCommands['agent.toolApp']['payload'],
): Promise<AgentCommands['agent.toolApp']['result']> {
  const stored = await store.read(sessionId, 0);
  for (let i = stored.length - 1; i >= 0; i--) {
    const e = stored[i]!.event;
    if (e.type === 'toolResult' && e.callId === callId) return e.app ? { app: e.app } : {};
  }
  return {};
}

/** `agent.deleteSession`: deletes (or, with `ifIdleForMs`, deletes if idle) and tells `onSessionDeleted`. */
async function deleting(
  deps: CommandHandlerDeps,
  { sessionId, ifIdleForMs }: AgentCommands['agent.deleteSession']['payload'],
): Promise<{ deleted: boolean }> {
  const deleted = await (ifIdleForMs === undefined
    ? deps.sessions.deleteSession(sessionId)
    : deps.deleteIfIdle(sessionId, ifIdleForMs));
  if (deleted) deps.onSessionDeleted?.(sessionId);
  return { deleted };
}
