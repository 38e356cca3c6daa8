/** Client frames' handlers; a frame's session id (default `default`) is keyed in its principal's namespace. */
import { DEFAULT_SESSION, toFrame, type SessionStoredEvent } from '../agent/index.ts';
import { asNamed, type SessionKey } from '../session-id.ts';
import type { EngineSocket } from './engine/index.ts';
import { CLIENT_FRAMES, type ClientFrame, type ClientFrameHandlers, type ClientFrameType } from './frames.ts';
import { resolveAttachments } from './attach.ts';
import { validateImage } from '../conversation/image-data.ts';
import type { AnswerInput } from '../conversation/questions.ts';
import { answeredVia } from '../auth/index.ts';
import { parseInput } from './validate.ts';
import { roomFor, sessionTopic, type Connection, type GatewayDeps } from './ws-connection.ts';
import { replySoFarFrame, type BusEvent } from './session-frames.ts';
import { openSeam, type Seam, type SeamDeps } from './ws-seam.ts';
import { clientToolsOf, DEFAULT_CLIENT_TOOLS } from './client-tools.ts';

/** The turn whose end a stored fact is (its `response`, its `turnFailed`), if any. */
const turnEndedBy = ({ event: e }: SessionStoredEvent): string | undefined =>
  e.type === 'response' || e.type === 'turnFailed' ? e.turnId : undefined;

/**
 * Opens the seam of a `subscribe{since}` on the connection (ws-seam.ts) in place of an earlier one, and takes the
 * connection off the session's topic in the same step as the seam's start: no frame is lost or doubled.
 */
function seamOn(
  ws: EngineSocket<Connection>,
  sessionId: SessionKey,
  since: number,
  deps: Pick<SeamDeps, 'bus' | 'frameOf' | 'replySoFar'>,
): Seam {
  const conn = ws.data;
  const seam = openSeam({
    ...deps,
    sessionId,
    since,
    send: (text) => {
      if (!conn.closed) ws.send(text);
    },
    goLive: () => {
      conn.seams.delete(sessionId);
      if (!conn.closed) ws.subscribe(sessionTopic(sessionId));
    },
  });
  conn.seams.get(sessionId)?.close();
  conn.seams.set(sessionId, seam);
  ws.unsubscribe(sessionTopic(sessionId));
  return seam;
}

export function createClientFrames(
  deps: Pick<GatewayDeps, 'bus' | 'auth' | 'follower' | 'slowReaderBytes' | 'clientTools'>,
  sessionFrame: (e: BusEvent) => string | undefined,
  sendTo: (ws: EngineSocket<Connection>, event: string, data: unknown) => void,
) {
  /** Resolves once frames from other instances will arrive (undefined when it already watched). */
  const watch = (conn: Connection, sessionId: string): Promise<void> | undefined => {
    if (conn.sessions.has(sessionId)) return undefined;
    conn.sessions.add(sessionId);
    return deps.follower.watchInterest(sessionId);
  };
  /**
   * Joins the session's topic (a seam joins it later). `catchUp` (a `subscribe`): sends the reply its turn streamed
   * so far first, in the same step, so the topic brings exactly the chunks after it (reply-so-far.ts).
   */
  const join = async (ws: EngineSocket<Connection>, sessionId: string, catchUp = false): Promise<void> => {
    const watching = watch(ws.data, sessionId);
    if (watching) await watching;
    if (ws.data.closed || ws.data.seams.has(sessionId)) return;
    const reply = catchUp ? deps.follower.replySoFar(sessionId) : undefined;
    if (reply) ws.send(replySoFarFrame(reply));
    ws.subscribe(sessionTopic(sessionId));
  };
  const leave = (ws: EngineSocket<Connection>, sessionId: string): void => {
    if (ws.data.sessions.delete(sessionId)) deps.follower.unwatchInterest(sessionId);
    ws.data.seams.get(sessionId)?.close();
    ws.data.seams.delete(sessionId);
    ws.unsubscribe(sessionTopic(sessionId));
  };
  /**
   * Replays the session's stored frames after `since` (paced: `roomFor`), then its live ones, through a seam (ws-seam.ts)
   * taking the connection off the session's topic until it joins it again at the right frame. Replaces an earlier seam.
   */
  const replayThenLive = async (ws: EngineSocket<Connection>, sessionId: SessionKey, since: number): Promise<void> => {
    const conn = ws.data;
    const seam = seamOn(ws, sessionId, since, {
      bus: deps.bus,
      frameOf: sessionFrame,
      replySoFar: () => deps.follower.replySoFar(sessionId),
    });
    try {
      await deps.follower.replay(
        sessionId,
        since,
        (stored) => {
          seam.replayed(stored.seq, turnEndedBy(stored));
          const f = toFrame(stored);
          return f && (sendTo(ws, f.event, asNamed(f.data)), roomFor(ws, deps.slowReaderBytes));
        },
        () => conn.closed || conn.seams.get(sessionId) !== seam,
      );
    } catch (err) {
      seam.close();
      if (conn.seams.get(sessionId) === seam) conn.seams.delete(sessionId);
      throw err;
    }
    seam.caughtUp();
  };

  type FrameContext = { ws: EngineSocket<Connection>; sessionId: SessionKey };

  /** Answers a question of the session (an approval, an elicitation): the `approve` scope's. */
  const answer = async ({ ws, sessionId }: FrameContext, id: string, reply: AnswerInput): Promise<void> => {
    deps.auth.check(ws.data.principal, 'approve');
    const via = answeredVia('websocket', ws.data.principal);
    await deps.bus.execute('agent.answer', { sessionId, id, answer: reply, ...via });
  };

  const handlers: ClientFrameHandlers<FrameContext> = {
    async message({ ws, sessionId }, msg) {
      const image = msg.imageData ? validateImage(msg.imageData) : undefined;
      const clientTools = clientToolsOf(msg.tools, ws.data.principal, deps.clientTools ?? DEFAULT_CLIENT_TOOLS);
      const { quota } = ws.data.access;
      await join(ws, sessionId);
      const attached = await resolveAttachments(msg, deps.bus);
      await deps.bus.execute('agent.sendMessage', {
        sessionId,
        content: msg.content,
        ...(image && { image }),
        ...(attached && { attached }),
        ...(clientTools && { clientTools }),
        ...(quota && { quota }),
      });
    },
    async reset({ sessionId }) {
      await deps.bus.execute('agent.reset', { sessionId });
    },
    async cancel({ sessionId }) {
      await deps.bus.execute('agent.cancel', { sessionId });
    },
    async compact({ ws, sessionId }) {
      await join(ws, sessionId); // its contextCompacted frame is how the client hears it is done
      await deps.bus.execute('agent.compact', { sessionId });
    },
    async subscribe({ ws, sessionId }, msg) {
      // Frames from other instances flow before the replay reads the log, so none falls in the seam.
      if (msg.since === undefined) return join(ws, sessionId, true);
      const watching = watch(ws.data, sessionId);
      if (watching) await watching;
      if (!ws.data.closed) await replayThenLive(ws, sessionId, msg.since);
    },
    unsubscribe({ ws, sessionId }) {
      if (sessionId !== ws.data.access.key(DEFAULT_SESSION)) leave(ws, sessionId);
    },
    approval(context, { callId, decision, reason, raiseTo }) {
      const extra = { ...(reason !== undefined && { reason }), ...(raiseTo !== undefined && { raiseTo }) };
      return answer(context, callId, { decision, ...extra });
    },
    elicitation(context, { id, action, content }) {
      return answer(context, id, { action, ...(content !== undefined && { content }) });
    },
    ping({ ws }) {
      sendTo(ws, 'pong', {});
    },
  };

  const handle = async <T extends ClientFrameType>(
    ws: EngineSocket<Connection>,
    type: T,
    parsed: unknown,
  ): Promise<void> => {
    const msg = parseInput(CLIENT_FRAMES[type], parsed, `${type} frame`) as ClientFrame<T>;
    const id = 'sessionId' in msg && typeof msg.sessionId === 'string' ? msg.sessionId : DEFAULT_SESSION;
    const owner = 'owner' in msg && typeof msg.owner === 'string' ? msg.owner : undefined;
    const sessionId = ws.data.access.key(id, owner);
    const handler = handlers[type] as (context: FrameContext, frame: ClientFrame<T>) => Promise<void> | void;
    await handler({ ws, sessionId }, msg);
  };

  return { handle, join };
}
