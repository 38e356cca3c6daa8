/**
 * Export, import and fork of a session's log (the handlers of `agent.exportSession`,
 * `agent.importSession` and `agent.forkSession`).
 *
 * Contracts:
 * - They work on the store alone, never on a session in memory: an export reads the stored log (what
 *   is durable now); an import or a fork writes a NEW session with one `store.create`, so the new log
 *   appears whole or not at all and an existing log is never written to. So with a cluster any
 *   instance runs them against the shared store (src/agent/session/commands.ts: not session-scoped);
 *   the new session is taken by whichever instance gets its first command.
 * - The new session's id comes from the caller (the HTTP route makes it: one place to map ids), and
 *   must be unknown here too: a session of that id in memory (or being deleted) is refused like a
 *   stored one (INTERNAL_ERROR `reason: "exists"`), since it would not see the new log.
 * - The copied events keep their seq, ts and payload, so the new session's frames equal the
 *   original's (bar `sessionId`). What the copy leaves open is closed after it, in the same
 *   `create`, so nothing of it runs when the session opens (session.ts would resume it): a turn that
 *   never ended (running, or waiting for approval) ends with a `turnFailed` AGENT_ERROR whose
 *   `details.reason` is `imported` / `forked` (as session.ts ends an orphaned turn), then each message
 *   still queued is discarded as a reset discards one (`turnFailed`, cancelled, same reason). They
 *   take the next seqs and the current time.
 * - A fork's `seq` must be 1 ≤ seq ≤ the source's last seq (INVALID_REQUEST `field: "seq"`): its log
 *   is the source's events up to and including `seq`. An unknown source has no seq to fork at.
 */
import type { SessionEvent } from '../../conversation/session-events.ts';
import type { TransferEntry } from '../../conversation/session-transfer.ts';
import { isoNow, type Clock } from '../../clock.ts';
import { AppError } from '../../errors/index.ts';
import type { EventStore, LogEntry } from '../../store/types.ts';
import { agentTurnFailed } from '../../conversation/turn-steps.ts';
import type { SessionStoredEvent } from '../frames.ts';
import { droppedMessage } from '../transient-frames.ts';
import { foldSession } from './state.ts';

export type TransferReason = 'imported' | 'forked';

/** The events that close what `events` leave open (see the contracts); none for a log at rest. */
export function closingEvents(events: readonly SessionEvent[], reason: TransferReason): SessionEvent[] {
  const closing: SessionEvent[] = [];
  const { openTurn: open, queued } = foldSession('', events);
  if (open)
    closing.push(
      agentTurnFailed(open.user.turnId, `The turn was stopped: the session was ${reason} before it ended`, reason),
    );
  for (const turnId of queued.keys()) closing.push(agentTurnFailed(turnId, droppedMessage(reason), reason, true));
  return closing;
}

export interface SessionTransferDeps {
  store: EventStore<SessionEvent>;
  clock: Clock;
  /** Whether the session service holds (or is deleting) a session of this id. */
  inUse: (sessionId: string) => boolean;
}

export function createSessionTransfer({ store, clock, inUse }: SessionTransferDeps) {
  /** Writes `copied` and what closes it as the new session `sessionId`. */
  async function create(sessionId: string, copied: readonly LogEntry<SessionEvent>[], reason: TransferReason) {
    if (inUse(sessionId))
      throw new AppError('INTERNAL_ERROR', `session ${sessionId} already exists`, { sessionId, reason: 'exists' });
    const ts = isoNow(clock);
    let seq = copied.at(-1)?.seq ?? 0;
    const closing = closingEvents(
      copied.map((e) => e.event),
      reason,
    ).map((event) => ({ seq: ++seq, ts, event }));
    await store.create(sessionId, [...copied, ...closing]);
    return { sessionId, lastSeq: seq };
  }

  return {
    /** The session's stored log, in seq order (empty for an unknown session). */
    async exportLog(sessionId: string): Promise<{ events: SessionStoredEvent[] }> {
      return { events: await store.read(sessionId) };
    },

    importLog(newSessionId: string, entries: readonly TransferEntry[]) {
      if (entries.length === 0) throw new AppError('INVALID_REQUEST', 'The import holds no event', { issue: 'empty' });
      return create(newSessionId, entries, 'imported');
    },

    async fork(sessionId: string, seq: number, newSessionId: string) {
      const log = await store.read(sessionId);
      const lastSeq = log.at(-1)?.seq ?? 0;
      if (!Number.isSafeInteger(seq) || seq < 1 || seq > lastSeq) {
        const range = lastSeq === 0 ? `session ${sessionId} has no stored event` : `it must be from 1 to ${lastSeq}`;
        throw new AppError('INVALID_REQUEST', `Cannot fork at seq ${seq}: ${range}`, { field: 'seq', lastSeq });
      }
      const prefix = log.filter((e) => e.seq <= seq).map(({ seq: s, ts, event }) => ({ seq: s, ts, event }));
      return create(newSessionId, prefix, 'forked');
    },
  };
}
