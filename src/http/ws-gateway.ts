/**
 * The WebSocket API at `/`: client frames become bus commands; bus events (bar those only faces hear) become
 * frames published to their session's topic, serialized once. A bad frame gets an `error` frame and the connection
 * stays open. Every connection gets `hello` first and watches `default` and the server-wide topic (admins have
 * their own).
 */
import { DEFAULT_SESSION, isFaceOnly } from '../agent/index.ts';
import { hasScope } from '../auth/index.ts';
import { AppError, toWsFrame } from '../errors/index.ts';
import { textTooDeep } from '../json-depth.ts';
import { jsonOrUndefined, tooDeepError } from './body.ts';
import type { EngineApp, EngineSocket, WebSocketRoute } from './engine/index.ts';
import { CLIENT_FRAMES, eventFrameOf, frame, helloFrame, isClientFrameType } from './frames.ts';
import { inOrder } from './in-order.ts';
import { rateLimitError } from './limits.ts';
import { logSlowReader, watchSlowReaders } from './slow-readers.ts';
import { createClientFrames } from './ws-client-frames.ts';
import { drained, sessionTopic, type Connection, type GatewayDeps } from './ws-connection.ts';
import { serverForNonAdmin } from './server-view.ts';
import type { ServerRecord } from '../tools/messages.ts';
import { createUpgrade } from './ws-upgrade.ts';
import { ADMIN_ONLY, createSessionFrames, isSessionEvent } from './session-frames.ts';

/** Server-wide events: every connection subscribes to one of these topics. */
export const ALL = 'all';
/** Server-wide events with what only admins see: OAuth sign-in URLs and ADMIN_ONLY events. */
export const ALL_ADMIN = 'all:admin';

export function createWsGateway(app: Pick<EngineApp, 'publish'>, deps: GatewayDeps) {
  const open = new Set<EngineSocket<Connection>>();

  const sendTo = (ws: EngineSocket<Connection>, event: string, data: unknown) => {
    if (!ws.data.closed) ws.send(frame(event, data));
  };
  const sendError = (ws: EngineSocket<Connection>, err: unknown, sessionId?: string) => {
    const { event, data } = toWsFrame(err, sessionId);
    if (data.code === 'INTERNAL_ERROR')
      deps.log.error({ err, principal: ws.data.principal.name }, 'websocket command failed');
    sendTo(ws, event, data);
  };

  const sessionFrame = createSessionFrames();
  const unsubscribeBus = deps.bus.onAny((e) => {
    if (isFaceOnly(e.name)) return; // `awaiting`: for the faces, no client frame (src/agent/frames.ts)
    const data = e.payload as { sessionId?: string };
    if (isSessionEvent(e)) {
      const text = sessionFrame(e);
      if (text === undefined) return; // a fact clients never see
      app.publish(sessionTopic(data.sessionId ?? DEFAULT_SESSION), text);
    } else if (ADMIN_ONLY.has(e.name)) app.publish(ALL_ADMIN, frame(eventFrameOf(e.name), data));
    else {
      // Server-wide `mcp.*` (a call's progress names its session, and goes to its watchers). A server's status: its
      // error and sign-in URL to admins only (server-view.ts).
      const shown = e.name === 'mcp.serverStatus' ? serverForNonAdmin(e.payload as ServerRecord) : data;
      app.publish(ALL, frame(eventFrameOf(e.name), shown));
      app.publish(ALL_ADMIN, frame(eventFrameOf(e.name), data));
    }
    deps.metrics?.framePublished();
  });

  const upgrade = createUpgrade(deps);
  const { handle, join } = createClientFrames(deps, sessionFrame, sendTo);

  const onMessage = async (ws: EngineSocket<Connection>, text: string): Promise<void> => {
    const conn = ws.data;
    const [perConnection, perIp] = await Promise.all([
      deps.limits.ws.consume(conn.id),
      deps.limits.wsPerIp.consume(conn.ip),
    ]);
    if (conn.closed) return;
    const over = !perConnection.allowed
      ? rateLimitError(perConnection, 'messages on one WebSocket', 'server.limits.ws.points')
      : !perIp.allowed
        ? rateLimitError(perIp, 'WebSocket messages from this address', 'server.limits.wsPerIp')
        : undefined;
    if (over) {
      deps.metrics?.rejected('ws_message');
      return sendError(ws, over);
    }
    if (textTooDeep(text)) return sendError(ws, tooDeepError('frame'));
    const parsed = jsonOrUndefined(text) as { type?: unknown; sessionId?: unknown } | null | undefined;
    if (parsed === undefined)
      return sendError(ws, new AppError('INVALID_REQUEST', 'Frame is not valid JSON', { issue: 'malformed JSON' }));
    const type = parsed?.type;
    if (!isClientFrameType(type)) {
      return sendError(
        ws,
        new AppError('INVALID_MESSAGE_TYPE', `Unsupported message type: ${JSON.stringify(type)}`, {
          type,
          supported: Object.keys(CLIENT_FRAMES),
        }),
      );
    }
    const sessionId = parsed?.sessionId;
    try {
      await handle(ws, type, parsed);
    } catch (err) {
      sendError(ws, err, typeof sessionId === 'string' ? sessionId : undefined);
    }
  };

  const slowReader = logSlowReader(deps);
  const inTurn = inOrder<Connection>(); // a connection's frames start in order (in-order.ts)
  const stalled = (ws: EngineSocket<Connection>, bytes: number) => slowReader(ws.data, bytes, 'stalled');
  const slowReaders = watchSlowReaders(() => open, { maxMs: deps.slowReaderMs, clock: deps.clock }, stalled);

  // A frame over maxBody closes with 1009 and a reason; the engine reads up to twice it, cuts larger ones without.
  const route: WebSocketRoute<Connection> = {
    maxPayloadBytes: 2 * deps.maxBodyBytes,
    idleTimeoutSec: 120,
    maxBackpressureBytes: deps.slowReaderBytes,
    lagged: (ws, queuedBytes) => slowReader(ws.data, queuedBytes, 'backlog'),
    drain: (ws) => drained(ws.data),
    upgrade,
    open: (ws) => {
      ws.send(JSON.stringify(helloFrame({ storeId: deps.storeId() }))); // before any other frame
      open.add(ws);
      deps.metrics?.connections(1);
      ws.subscribe(hasScope(ws.data.principal, 'admin') ? ALL_ADMIN : ALL);
      join(ws, ws.data.access.key(DEFAULT_SESSION)).catch((err: unknown) =>
        deps.log.warn({ err }, 'watching the default session failed'),
      );
    },
    message: (ws, text, bytes) => {
      if (bytes > deps.maxBodyBytes)
        return ws.close(1009, `frame of ${bytes} bytes is over the limit of ${deps.maxBodyBytes}`);
      inTurn(ws.data, () =>
        onMessage(ws, text).catch((err: unknown) => deps.log.error({ err }, 'websocket message failed')),
      );
    },
    close: (ws) => {
      const conn = ws.data;
      conn.closed = true;
      open.delete(ws);
      deps.metrics?.connections(-1);
      deps.limits.connections.close(conn.ip);
      deps.limits.ws.forget(conn.id).catch(() => undefined);
      for (const sessionId of conn.sessions) deps.follower.unwatchInterest(sessionId);
      conn.sessions.clear();
      for (const seam of conn.seams.values()) seam.close();
      conn.seams.clear();
      drained(conn); // a replay waiting for room stops (it sees the connection closed)
    },
  };

  return {
    route,
    size: () => open.size,
    closeAll(): void {
      for (const ws of open) ws.close(1001, 'server shutting down');
      slowReaders.stop();
      unsubscribeBus();
    },
  };
}
