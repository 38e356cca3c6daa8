/**
 * The reply each session's running turn has streamed so far, as a follower that saw the turn from its start shows it
 * (src/client/frames.ts `joinText`): what a `subscribe` arriving mid-reply is sent first (`replySoFar`).
 *
 * Contracts:
 * - Folded from the session's bus events, in their order: a chunk appends (a chunk of another turn starts over), a
 *   `turnResumed` fact (`stepRestarted`) replaces it with its reply, the turn's end (`response`, `turnFailed`, an
 *   `error` frame of the turn) or a `reset` forgets it, a reply seed (REPLY_SEED_EVENT) replaces or forgets it. `seq`
 *   is the session's newest durable seq heard since the reply began; a fact not newer is passed over (one the cluster
 *   read back from the store after a seed that holds it).
 * - Read between two bus events (never from inside a listener of one), `of` equals that fold over every event emitted
 *   before: a subscriber that gets it and joins the session's topic in the same step misses no chunk and gets none
 *   twice (the topic carries the events emitted after).
 * - Every event of a session passes here on the instance that owns it. Another instance hears a session only while
 *   the cluster relays it (a watch), and the watch's owner seeds it first (src/cluster/fan-out.ts), so it holds the
 *   owner's fold from then on; `of` is undefined while no reply text streams.
 */
import type { Bus, CommandSpec, EventSpec } from '../../bus/index.ts';
import {
  REPLY_SEED_EVENT,
  STORED_EVENT,
  type AgentFrameData,
  type ReplySeed,
  type SessionStoredEvent,
} from '../frames.ts';

export type ReplySoFar = AgentFrameData['replySoFar'];

export function createReplyTracker(bus: Pick<Bus<CommandSpec, EventSpec>, 'onAny'>) {
  const replies = new Map<string, ReplySoFar>();
  const ended = (sessionId: string, turnId: string | undefined) => {
    if (turnId === undefined || replies.get(sessionId)?.turnId === turnId) replies.delete(sessionId);
  };
  const stored = ({ sessionId, seq, event: e }: SessionStoredEvent) => {
    if (seq <= (replies.get(sessionId)?.seq ?? -1)) return; // older than the fold (a fact read back after a seed)
    if (e.type === 'turnResumed')
      return void replies.set(sessionId, { sessionId, turnId: e.turnId, seq, content: e.reply });
    if (e.type === 'response' || e.type === 'turnFailed') return ended(sessionId, e.turnId);
    if (e.type === 'reset') return ended(sessionId, undefined);
    const reply = replies.get(sessionId);
    if (reply) reply.seq = seq;
  };
  const off = bus.onAny(({ name, payload }) => {
    if (name === 'agent.chunk') {
      const { sessionId, turnId, seq, content } = payload as AgentFrameData['chunk'];
      const reply = replies.get(sessionId);
      if (reply?.turnId === turnId) {
        reply.seq = seq; // per chunk: no object made
        reply.content += content;
      } else replies.set(sessionId, { sessionId, turnId, seq, content });
    } else if (name === STORED_EVENT) stored(payload as SessionStoredEvent);
    else if (name === 'agent.error') {
      const { sessionId, turnId } = payload as AgentFrameData['error'];
      if (turnId !== undefined) ended(sessionId, turnId);
    } else if (name === REPLY_SEED_EVENT) {
      const { sessionId, reply } = payload as ReplySeed;
      if (reply) replies.set(sessionId, { ...reply });
      else replies.delete(sessionId);
    }
  });
  return {
    /** The reply the session's turn streamed so far (undefined: no reply text streams); a copy. */
    of(sessionId: string): ReplySoFar | undefined {
      const reply = replies.get(sessionId);
      return reply && reply.content !== '' ? { ...reply } : undefined;
    },
    /** The seed of a new watch of the session on another instance (REPLY_SEED_EVENT). */
    seedOf: (sessionId: string): ReplySeed => ({ sessionId, reply: replies.get(sessionId) ?? null }),
    close: off,
  };
}
export type ReplyTracker = ReturnType<typeof createReplyTracker>;
