import { AppError } from '../errors/index.ts';
import type { EngineRequest, UpgradeResponse } from './engine/index.ts';
import type { LimitState } from './limits.ts';
import { requestFacts } from './admission.ts';
import { errorReply, send } from './respond.ts';
import type { Connection, GatewayDeps } from './ws-connection.ts';

/**
 * The upgrade at `/`: the admission chain, whose route step takes a connection slot for the IP (429 when it
 * holds `connectionsPerIp`). Refusals are REST envelopes; a client that left meanwhile gives its slot back.
 */
export function createUpgrade(
  deps: Pick<GatewayDeps, 'admission' | 'clientIp' | 'limits' | 'metrics' | 'sessionsOf' | 'ids' | 'log' | 'clock'>,
) {
  return (req: EngineRequest, res: UpgradeResponse<Connection>): void => {
    const ip = deps.clientIp(req);
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
      const facts = requestFacts(req.method, req.headers, ip, {}, new URLSearchParams(req.query));
      const verdict = await deps.admission.admit(facts, { route: takeSlot });
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
        seams: new Map(),
        drainWaiters: new Set(),
      };
      deps.log.debug({ connection: conn.id, ip, principal: conn.principal.name }, 'websocket connected');
      res.accept(conn);
    };
    run().catch((err: unknown) => {
      deps.log.error({ err }, 'websocket upgrade failed');
      send(res, errorReply(err, deps.clock.now()));
    });
  };
}
