import type { FrontEndBus } from './front-bus.ts';
import type { Clock, IdSource } from '../clock.ts';
import type { AgentConfig } from '../config/schema.ts';
import type { Logger } from '../log/index.ts';
import type { InspectHub } from '../inspect/index.ts';
import type { HttpFace } from '../mcp-face/index.ts';
import type { Metrics } from '../metrics/index.ts';
import { createAdmission } from './admission.ts';
import { createPrincipals, sessionAccess, type Principal } from '../auth/index.ts';
import type { SessionsOf } from './route.ts';
import { createCors } from './cors.ts';
import { createInject, type EngineSelection, type HttpHandler } from './engine/index.ts';
import { createHostCheck } from './host-check.ts';
import { createInspectWs } from './inspect-ws.ts';
import { connectionGate, createLimits, type Limits } from './limits.ts';
import { createMcpEndpoint } from './mcp-endpoint.ts';
import { createA2aFace, createA2aRest } from '../a2a-face/index.ts';
import { cardFor, createA2aEndpoint } from './routes/a2a-routes.ts';
import { createA2aRestEndpoint, isA2aRestPath } from './routes/a2a-rest-endpoint.ts';
import { createAgUiFace } from '../ag-ui-face/index.ts';
import { createAgUiEndpoint } from './routes/ag-ui-routes.ts';
import { createRestHandler } from './rest.ts';
import type { Route } from './route.ts';
import { createRouter } from './router.ts';
import { createClientIp, trustedSet } from './ip.ts';
import { createWsGateway } from './ws-gateway.ts';
import type { TurnFollower } from '../agent/index.ts';

export interface FrontEndDeps {
  engine: EngineSelection;
  metrics?: Metrics;
  config: AgentConfig;
  bus: FrontEndBus;
  log: Logger;
  clock: Clock;
  ids: IdSource;
  routes: Route[];
  /** Replaces the limiters built from `config.server.limits` (tests). */
  limits?: Limits;
  /** `mcp`: no WebSocket API at `/`. */
  mode: 'web' | 'mcp';
  mcpFace: HttpFace;
  /** This instance's id (refuses /mcp tool calls from itself). */
  instanceId: string;
  /** Served at /inspect/ws when given. */
  inspect?: InspectHub | undefined;
  follower: TurnFollower;
  /** Sent in the `hello` frame; read once a socket opens. */
  storeId: () => string;
}

/** The front end: REST under /api, the WebSocket API at /, /mcp, /a2a, /a2a/rest and AG-UI, on `deps.engine`. */
export function createFrontEnd(deps: FrontEndDeps) {
  const { config, log } = deps;
  const limitsConfig = config.server.limits;
  const { engine, fallback } = deps.engine;
  const limits = deps.limits ?? createLimits(limitsConfig, deps.clock);
  const trusted = trustedSet(config.server.trustedProxies);
  const app = engine.createApp({
    connections: connectionGate(limits.httpConnections, (address) => trusted.has(address)),
  });
  const cors = createCors(config.server.cors);
  const hosts = createHostCheck(config.server.allowedHosts);
  const clientIp = createClientIp(config.server.trustedProxies);
  let closing = false;
  const auth = createPrincipals(config.server.auth, {
    onJwksError: (err) => log.warn({ err }, 'the JSON Web Key Set of server.auth.jwt cannot be read'),
  });
  const ownership = { strict: auth.configured, sessionsPerPrincipal: limitsConfig.sessionsPerPrincipal };
  const sessionsOf: SessionsOf = (principal, ip) => sessionAccess(principal, ip, ownership);
  const mayApprove = (principal: Principal) => auth.allows(principal, 'approve');
  const admission = createAdmission({
    limiter: limits.rest,
    cors,
    auth,
    clock: deps.clock,
    isHostAllowed: hosts.isAllowed,
    isClosing: () => closing,
  });

  // What every endpoint shares, the WebSockets too; messages are the largest bodies (chat_with_agent on /mcp).
  const endpoint = { sessionsOf, log, admission, clientIp, maxBodyBytes: limitsConfig.maxBodyBytes, clock: deps.clock };
  const rest = createRestHandler({
    ...(deps.metrics && { metrics: deps.metrics }),
    ...endpoint,
    bus: deps.bus,
    router: createRouter(deps.routes),
    maxJsonBytes: limitsConfig.maxJsonBytes,
    maxRawBytes: limitsConfig.maxImportBytes,
  });
  // The gateway publishes through the engine's topics, which exist only once a WebSocket route does.
  const gateway =
    deps.mode === 'web'
      ? createWsGateway(app, {
          ...(deps.metrics && { metrics: deps.metrics }),
          ...endpoint,
          bus: deps.bus,
          auth,
          limits,
          slowReaderMs: limitsConfig.slowReaderMs,
          ids: deps.ids,
          follower: deps.follower,
          storeId: deps.storeId,
        })
      : undefined;
  const mcp = createMcpEndpoint({
    ...(deps.metrics && { metrics: deps.metrics }),
    ...endpoint,
    face: deps.mcpFace,
    limiter: limits.rest,
    instanceId: deps.instanceId,
    mayApprove,
  });

  const a2aFace = config.a2a.enabled
    ? createA2aFace({
        bus: deps.bus,
        follower: deps.follower,
        ids: deps.ids,
        maxHops: config.server.mcp.maxHops,
        waitMs: config.server.requestTimeoutMs,
        mayApprove,
        card: (origin) => cardFor(config, { host: new URL(origin).host }),
      })
    : undefined;
  const a2a = a2aFace ? createA2aEndpoint({ face: a2aFace, config, ...endpoint }) : undefined;
  const a2aRest = a2aFace ? createA2aRestEndpoint({ rest: createA2aRest(a2aFace), config, ...endpoint }) : undefined;

  const agUi = config.agUi.enabled
    ? createAgUiEndpoint({
        face: createAgUiFace({
          bus: deps.bus,
          follower: deps.follower,
          clock: deps.clock,
          mayApprove,
          clientTools: config.agUi.clientTools,
        }),
        path: config.agUi.path,
        ...endpoint,
      })
    : undefined;

  const inspectWs = deps.inspect ? createInspectWs({ hub: deps.inspect, ...endpoint }) : undefined;
  if (inspectWs) app.websocket('/inspect/ws', inspectWs.route);
  if (gateway) app.websocket('/', gateway.route);
  // Each endpoint answers the unknown paths under it too; AG-UI's capabilities are a REST route.
  const isA2a = (path: string) => path === '/a2a' || path.startsWith('/a2a/');
  const agUiPath = config.agUi.path;
  const isAgUi = (path: string) =>
    path === agUiPath || (path.startsWith(`${agUiPath}/`) && path !== `${agUiPath}/capabilities`);
  const serve: HttpHandler = (req, res) =>
    (req.path === '/mcp'
      ? mcp
      : a2aRest && isA2aRestPath(req.path)
        ? a2aRest
        : a2a && isA2a(req.path)
          ? a2a
          : agUi && isAgUi(req.path)
            ? agUi
            : rest)(req, res);
  app.http(serve);

  return {
    engine: engine.name,
    /** Resolves with the bound port; `shared`: processes of one agentd (`--workers`) serve one port. */
    async listen(host: string, port: number, options: { shared?: boolean } = {}): Promise<number> {
      if (fallback) {
        log.info({ engine: engine.name }, fallback.summary);
        log.debug({ reason: fallback.reason, detail: fallback.detail }, 'uWebSockets.js load error');
      }
      const bound = await app.listen(host, port, { shared: options.shared ?? false });
      hosts.bound(host);
      log.info({ host, port: bound, engine: engine.name }, `listening on http://${host}:${bound} (${engine.label})`);
      return bound;
    },
    /** Stops accepting, closes WebSockets with 1001. Idempotent. */
    close(): void {
      if (closing) return;
      closing = true;
      app.close();
      gateway?.closeAll();
      inspectWs?.closeAll();
    },
    /** Open WebSocket connections at `/`. */
    connections: (): number => gateway?.size() ?? 0,
    /** Answers a request in process, without listening (engine/inject.ts). */
    inject: createInject(serve),
  };
}

export type FrontEnd = ReturnType<typeof createFrontEnd>;
