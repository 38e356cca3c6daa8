import type { EngineApp, EngineRequest, EngineSocket, UpgradeResponse, WebSocketRoute } from './engine/index.ts';
import { DEFAULT_SESSION } from '../agent/messages.ts';
import type { FrontEndBus } from './front-bus.ts';
import type { Clock } from '../clock.ts';
import { AppError, toWsFrame } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import type { Admission } from './admission.ts';
import {
  CLIENT_FRAMES,
  EVENT_FRAMES,
  frame,
  helloFrame,
  isClientFrameType,
  type ClientFrame,
  type ClientFrameHandlers,
  type ClientFrameType,
} from './frames.ts';
import type { ClientIp } from './ip.ts';
import { rateLimitError, type LimitState, type Limits } from './limits.ts';
import { validateImage } from '../conversation/image-data.ts';
import { parseInput } from './validate.ts';
import { hasScope } from '../auth/index.ts';
import { upgradeCredential, type Principal, type Principals, type SessionAccess } from './auth.ts';
import type { SessionsOf } from './route.ts';
import { asNamed, type SessionKey } from '../session-id.ts';
import { tooDeepError } from './body.ts';
import type { Metrics } from '../metrics/index.ts';
import { textTooDeep } from '../json-depth.ts';
import { errorReply, send } from './respond.ts';
import { resolveAttachments } from './attach.ts';
import { watchSlowReaders } from './slow-readers.ts';
import { inOrder } from './in-order.ts';
import type { TurnFollower } from '../agent/index.ts';

export interface Connection {
  id: string;
  ip: string;
  closed: boolean;
  /** Who the connection acts for, resolved once at the upgrade (header or `?token=`). */
  principal: Principal;
  /** The sessions its principal reaches: every id a frame names becomes a key through it (src/auth/ownership.ts). */
  access: SessionAccess;
  /** Keys of the sessions whose frames it receives (besides server-wide events). */
  sessions: Set<string>;
}

export interface GatewayDeps {
  metrics?: Pick<Metrics, 'rejected' | 'connections' | 'framePublished'>;
  bus: FrontEndBus;
  log: Logger;
  clock: Clock;
  admission: Admission;
  clientIp: ClientIp;
  auth: Principals;
  sessionsOf: SessionsOf;
  limits: Limits;
  maxPayloadBytes: number;
  /** How long a reader may leave its buffer full before it is closed (1008). */
  slowReaderMs: number;
  ids: () => string;
  /**
   * Reads a session's stored frames from a seq (`subscribe`'s replay) and asks for its frames from other
   * instances while a connection watches it (src/agent/follow: the seam every face follows turns through).
   */
  follower: Pick<TurnFollower, 'replay' | 'watchInterest' | 'unwatchInterest'>;
  /** The store's identity, sent first on every connection (`hello`); known before the service listens. */
  storeId: () => string;
}

/** Topic of a session's events; every connection is on `default` and on `ALL` (server-wide events). */
export const sessionTopic = (sessionId: string) => `s:${sessionId}`;
const ALL = 'all';
/** Server-wide events as admins see them: a tool server's OAuth sign-in URL is theirs alone (docs/tool-servers.md, "OAuth-protected tool servers"), and some events are for admins only (tool servers' logs). */
const ALL_ADMIN = 'all:admin';
const ADMIN_ONLY: ReadonlySet<string> = new Set(['mcp.serverLog']);

/**
 * The WebSocket API at `/`: client frames become bus commands; bus events become frames
 * published to the topic of their session, so each event is serialized once however many
 * clients watch it. A bad frame gets an `error` event and the connection stays open.
 */
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

  const unsubscribeBus = deps.bus.onAny((e) => {
    const event = EVENT_FRAMES[e.name];
    const data = e.payload as { sessionId?: string };
    if (ADMIN_ONLY.has(e.name)) app.publish(ALL_ADMIN, frame(event, data));
    else if (e.name.startsWith('mcp.') && data.sessionId === undefined) {
      // Server-wide unless it names a session (a call's progress goes to the session's watchers).
      const { authorizationUrl, ...rest } = data as { authorizationUrl?: string };
      const shown = frame(event, rest); // serialized once when admins see the same
      app.publish(ALL, shown);
      app.publish(ALL_ADMIN, authorizationUrl === undefined ? shown : frame(event, data));
    } else app.publish(sessionTopic(data.sessionId ?? DEFAULT_SESSION), frame(event, asNamed(data)));
    deps.metrics?.framePublished();
  });

  /**
   * The upgrade at `/` passes the admission chain; its route step takes a connection slot for the IP (429 with
   * `details.resetTime` of the request window when the IP holds `connectionsPerIp`). A refused upgrade is the
   * REST envelope with the verdict's headers; an upgrade whose client left meanwhile gives its slot back.
   */
  const upgrade = (req: EngineRequest, res: UpgradeResponse<Connection>): void => {
    const ip = deps.clientIp(req);
    const { host = '', origin = '', authorization = '' } = req.headers;
    const credential = upgradeCredential(authorization, new URLSearchParams(req.query));
    const takeSlot = (limit: LimitState): void => {
      if (!deps.limits.connections.tryOpen(ip)) {
        throw new AppError('RATE_LIMIT_EXCEEDED', 'Too many concurrent connections from this address', {
          limit: deps.limits.connections.max,
          remaining: 0,
          resetTime: limit.resetTime,
        });
      }
    };
    const run = async () => {
      const verdict = await deps.admission.admit({ host, origin, ip, credential, scope: 'chat' }, { route: takeSlot });
      if (verdict.outcome === 'refused') {
        if (verdict.error.code === 'RATE_LIMIT_EXCEEDED') deps.metrics?.rejected('ws_upgrade');
        return send(res, errorReply(verdict.error, deps.clock.now(), verdict.status), verdict.headers);
      }
      if (verdict.outcome === 'preflight') throw new Error('unexpected preflight verdict on a WebSocket upgrade');
      if (res.ended) return deps.limits.connections.close(ip);
      const conn: Connection = {
        id: deps.ids(),
        ip,
        closed: false,
        principal: verdict.principal,
        access: deps.sessionsOf(verdict.principal, ip),
        sessions: new Set(),
      };
      deps.log.debug({ connection: conn.id, ip, principal: conn.principal.name }, 'websocket connected');
      res.accept(conn);
    };
    run().catch((err: unknown) => {
      deps.log.error({ err }, 'websocket upgrade failed');
      send(res, errorReply(err, deps.clock.now()));
    });
  };

  /**
   * Counts the connection as watching a session; what it returns resolves once frames from other
   * instances will arrive (nothing to wait for when it already watched, or there are no others).
   */
  const watch = (conn: Connection, sessionId: string): Promise<void> | undefined => {
    if (conn.sessions.has(sessionId)) return undefined;
    conn.sessions.add(sessionId);
    return deps.follower.watchInterest(sessionId);
  };
  /** Puts the connection on a session's topic, once frames from other instances will reach it too. */
  const join = async (ws: EngineSocket<Connection>, sessionId: string): Promise<void> => {
    const watching = watch(ws.data, sessionId);
    if (watching) await watching;
    if (!ws.data.closed) ws.subscribe(sessionTopic(sessionId));
  };
  const leave = (ws: EngineSocket<Connection>, sessionId: string): void => {
    if (ws.data.sessions.delete(sessionId)) deps.follower.unwatchInterest(sessionId);
    ws.unsubscribe(sessionTopic(sessionId));
  };

  /**
   * What a client frame's handler is given besides the frame: its connection and the key of the
   * session it names (default: `default`), in the namespace of the connection's principal.
   */
  type FrameContext = { ws: EngineSocket<Connection>; sessionId: SessionKey };

  /** The client frames' handlers, one per entry of CLIENT_FRAMES (src/http/frames.ts). */
  const handlers: ClientFrameHandlers<FrameContext> = {
    async message({ ws, sessionId }, msg) {
      const image = msg.imageData ? validateImage(msg.imageData) : undefined;
      const { quota } = ws.data.access;
      await join(ws, sessionId);
      const attached = await resolveAttachments(msg, deps.bus);
      await deps.bus.execute(
        'agent.sendMessage',
        {
          sessionId,
          content: msg.content,
          ...(image && { image }),
          ...(attached && { attached }),
          ...(quota && { quota }),
        },
        { sessionId },
      );
    },
    async reset({ sessionId }) {
      await deps.bus.execute('agent.reset', { sessionId }, { sessionId });
    },
    async cancel({ sessionId }) {
      await deps.bus.execute('agent.cancel', { sessionId }, { sessionId });
    },
    async compact({ ws, sessionId }) {
      await join(ws, sessionId); // its contextCompacted frame is how the client hears it is done
      await deps.bus.execute('agent.compact', { sessionId }, { sessionId });
    },
    async subscribe({ ws, sessionId }, msg) {
      // Frames from other instances flow before the replay reads the log, so none falls in the seam.
      await watch(ws.data, sessionId);
      await deps.follower.replay(
        sessionId,
        msg.since,
        (f) => sendTo(ws, f.event, asNamed(f.data)),
        () => ws.data.closed,
      );
      if (!ws.data.closed) ws.subscribe(sessionTopic(sessionId));
    },
    unsubscribe({ ws, sessionId }) {
      if (sessionId !== ws.data.access.key(DEFAULT_SESSION)) leave(ws, sessionId);
    },
    async approval({ ws, sessionId }, { callId, decision, reason }) {
      deps.auth.check(ws.data.principal, 'approve');
      await deps.bus.execute(
        'agent.answer',
        { sessionId, id: callId, answer: { decision, ...(reason !== undefined && { reason }) }, by: 'websocket' },
        { sessionId },
      );
    },
    async elicitation({ ws, sessionId }, { id, action, content }) {
      deps.auth.check(ws.data.principal, 'approve');
      await deps.bus.execute(
        'agent.answer',
        { sessionId, id, answer: { action, ...(content !== undefined && { content }) }, by: 'websocket' },
        { sessionId },
      );
    },
    ping({ ws }) {
      sendTo(ws, 'pong', {});
    },
  };

  /** Parses a frame of a known type with its schema and runs its handler. */
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

  const onMessage = async (ws: EngineSocket<Connection>, text: string): Promise<void> => {
    const conn = ws.data;
    const [perConnection, perIp] = await Promise.all([
      deps.limits.ws.consume(conn.id),
      deps.limits.wsPerIp.consume(conn.ip),
    ]);
    if (conn.closed) return;
    const over = !perConnection.allowed
      ? rateLimitError(perConnection, 'messages per window')
      : !perIp.allowed
        ? rateLimitError(perIp, 'messages per window from this address')
        : undefined;
    if (over) {
      deps.metrics?.rejected('ws_message');
      return sendError(ws, over);
    }
    if (textTooDeep(text)) return sendError(ws, tooDeepError('frame'));
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return sendError(ws, new AppError('INVALID_REQUEST', 'Frame is not valid JSON', { issue: 'malformed JSON' }));
    }
    const type = (parsed as { type?: unknown } | null)?.type;
    if (!isClientFrameType(type)) {
      return sendError(
        ws,
        new AppError('INVALID_MESSAGE_TYPE', `Unsupported message type: ${JSON.stringify(type)}`, {
          type,
          supported: Object.keys(CLIENT_FRAMES),
        }),
      );
    }
    const sessionId = (parsed as { sessionId?: unknown }).sessionId;
    try {
      await handle(ws, type, parsed);
    } catch (err) {
      sendError(ws, err, typeof sessionId === 'string' ? sessionId : undefined);
    }
  };

  // Frames: up to the limit they are served; past it (up to twice it, which the engine still reads) the
  // connection is closed with 1009 and a reason; the engine itself refuses anything larger (uWS cuts the
  // connection: 1006; node closes it with 1009 and no reason).
  // Slow readers (one more than `slowBytes` behind, or whose buffer stays full for `slowReaderMs`) are
  // closed with 1008 and a reason, long before the engine would start dropping frames at `maxBackpressure`.
  const slowBytes = Math.max(deps.maxPayloadBytes, 1024 * 1024);
  const inTurn = inOrder<Connection>(); // a connection's frames start in order (in-order.ts)
  const slowReaders = watchSlowReaders(() => open, {
    maxBytes: slowBytes,
    maxMs: deps.slowReaderMs,
    clock: deps.clock,
  });

  const route: WebSocketRoute<Connection> = {
    maxPayloadBytes: 2 * deps.maxPayloadBytes,
    idleTimeoutSec: 120,
    maxBackpressureBytes: 3 * slowBytes,
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
      if (bytes > deps.maxPayloadBytes)
        return ws.close(1009, `frame of ${bytes} bytes is over the limit of ${deps.maxPayloadBytes}`);
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
    },
  };

  return {
    route,
    /** Number of open connections. */
    size: () => open.size,
    /** Closes every connection with 1001 (going away). */
    closeAll(): void {
      for (const ws of open) ws.close(1001, 'server shutting down');
      slowReaders.stop();
      unsubscribeBus();
    },
  };
}
