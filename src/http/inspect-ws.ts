import type { EngineRequest, EngineSocket, UpgradeResponse, WebSocketRoute } from './engine/index.ts';
import type { InspectHub } from '../inspect/index.ts';
import { requestFacts, type EndpointDeps } from './admission.ts';
import { errorReply, send } from './respond.ts';

/** A viewer more than this many bytes behind gets nothing more until it drains (then a resync). */
const BEHIND_BYTES = 1024 * 1024;

interface ViewerData {
  filter: string | undefined;
  handle?: ReturnType<InspectHub['attach']>;
}

export interface InspectWsDeps extends Pick<EndpointDeps, 'admission' | 'clientIp' | 'clock' | 'log'> {
  hub: InspectHub;
}

/**
 * `GET /inspect/ws`: the inspection stream (src/inspect), admitted with the `inspect` scope. `?actor=<id>`
 * narrows it to one actor (`turn:<sessionId>`, `mcp:<name>`) and its children; what viewers send is ignored.
 */
export function createInspectWs(deps: InspectWsDeps): { route: WebSocketRoute<ViewerData>; closeAll(): void } {
  const open = new Set<EngineSocket<ViewerData>>();

  const upgrade = (req: EngineRequest, res: UpgradeResponse<ViewerData>): void => {
    const query = new URLSearchParams(req.query);
    const facts = requestFacts(req.method, req.headers, deps.clientIp(req), { scope: 'inspect' }, query);
    const data: ViewerData = { filter: query.get('actor') || undefined };
    deps.admission
      .admit(facts, { route: () => undefined })
      .then((verdict) => {
        if (verdict.outcome === 'refused')
          return send(res, errorReply(verdict.error, deps.clock.now(), verdict.status), verdict.headers);
        if (verdict.outcome === 'preflight') throw new Error('unexpected preflight verdict on a WebSocket upgrade');
        deps.log.debug({ ip: facts.ip, principal: verdict.principal.name }, 'inspector connected');
        res.accept(data);
      })
      .catch((err: unknown) => {
        deps.log.error({ err }, 'inspector upgrade failed');
        send(res, errorReply(err, deps.clock.now()));
      });
  };

  const route: WebSocketRoute<ViewerData> = {
    maxPayloadBytes: 4096,
    idleTimeoutSec: 120,
    maxBackpressureBytes: 4 * BEHIND_BYTES,
    upgrade,
    open: (ws) => {
      open.add(ws);
      ws.data.handle = deps.hub.attach(
        { send: (frame) => ws.send(frame) && ws.bufferedAmount < BEHIND_BYTES },
        ws.data.filter,
      );
    },
    drain: (ws) => {
      if (ws.bufferedAmount < BEHIND_BYTES / 2) ws.data.handle?.drained();
    },
    close: (ws) => {
      open.delete(ws);
      ws.data.handle?.detach();
    },
  };

  return {
    route,
    closeAll(): void {
      for (const ws of open) ws.close(1001, 'server shutting down');
    },
  };
}
