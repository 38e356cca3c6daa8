import type { HttpRequest, HttpResponse, UpgradeContext, WebSocket, WebSocketBehavior } from './engine/index.ts';
import type { Clock } from '../clock.ts';
import type { InspectHub } from '../inspect/index.ts';
import type { Logger } from '../log/index.ts';
import type { Admission } from './admission.ts';
import { upgradeCredential } from './auth.ts';
import type { ClientIp } from './ip.ts';
import { errorReply, send, watchAbort } from './respond.ts';

/** A viewer more than this many bytes behind gets nothing more until it drains (then a resync). */
const BEHIND_BYTES = 1024 * 1024;

interface ViewerData {
  filter: string | undefined;
  handle?: ReturnType<InspectHub['attach']>;
}

export interface InspectWsDeps {
  hub: InspectHub;
  admission: Admission;
  clientIp: ClientIp;
  clock: Clock;
  log: Logger;
}

/**
 * `GET /inspect/ws`: the inspection stream (src/inspect). The upgrade passes the same admission
 * chain as the API (Host, Origin, rate limit, a principal with the `inspect` scope; `?token=` for browsers); `?actor=<id>`
 * narrows the stream to one actor (`turn:<sessionId>`, `mcp:<name>`) and its children. Viewers send
 * nothing; what they send is ignored.
 */
export function createInspectWs(deps: InspectWsDeps): { behavior: WebSocketBehavior<ViewerData>; closeAll(): void } {
  const open = new Set<WebSocket<ViewerData>>();

  const upgrade = (res: HttpResponse, req: HttpRequest, context: UpgradeContext): void => {
    const { state } = watchAbort(res);
    const query = new URLSearchParams(req.getQuery());
    const facts = {
      host: req.getHeader('host'),
      origin: req.getHeader('origin'),
      ip: deps.clientIp(res, req),
      credential: upgradeCredential(req.getHeader('authorization'), query),
      scope: 'inspect' as const,
    };
    const headers = [req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions')] as const;
    const data: ViewerData = { filter: query.get('actor') || undefined };
    deps.admission
      .admit(facts, { route: () => undefined })
      .then((verdict) => {
        if (verdict.outcome !== 'admitted') {
          const error = verdict.outcome === 'refused' ? verdict.error : new Error('unexpected preflight on a WebSocket upgrade');
          return send(res, state, errorReply(error, deps.clock.now(), verdict.outcome === 'refused' ? verdict.status : 500), verdict.headers);
        }
        if (state.aborted) return;
        state.aborted = true;
        deps.log.debug({ ip: facts.ip, principal: verdict.principal.name }, 'inspector connected');
        res.upgrade(data, ...headers, context); // not inside `res.cork` (see types.ts)
      })
      .catch((err: unknown) => {
        deps.log.error({ err }, 'inspector upgrade failed');
        send(res, state, errorReply(err, deps.clock.now()));
      });
  };

  const behavior: WebSocketBehavior<ViewerData> = {
    maxPayloadLength: 4096,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    maxBackpressure: 4 * BEHIND_BYTES,
    upgrade,
    open: (ws) => {
      open.add(ws);
      const data = ws.getUserData();
      data.handle = deps.hub.attach({ send: (frame) => ws.send(frame) !== 2 && ws.getBufferedAmount() < BEHIND_BYTES }, data.filter);
    },
    drain: (ws) => {
      if (ws.getBufferedAmount() < BEHIND_BYTES / 2) ws.getUserData().handle?.drained();
    },
    close: (ws) => {
      open.delete(ws);
      ws.getUserData().handle?.detach();
    },
  };

  return {
    behavior,
    closeAll(): void {
      for (const ws of open) ws.end(1001, 'server shutting down');
    },
  };
}
