import type { FrontEndBus } from './front-bus.ts';
import type { Clock, IdSource } from '../clock.ts';
import type { AgentConfig } from '../config/schema.ts';
import type { Logger } from '../log/index.ts';
import type { InspectHub } from '../inspect/index.ts';
import type { Metrics } from '../metrics/index.ts';
import { createAdmission } from './admission.ts';
import { createPrincipals, sessionAccess, type Principal } from '../auth/index.ts';
import type { SessionsOf } from './route.ts';
import { createCors } from './cors.ts';
import { createInject, type EngineSelection, type HttpHandler } from './engine/index.ts';
import { createHostCheck } from './host-check.ts';
import { createInspectWs } from './inspect-ws.ts';
import { connectionGate, createLimits, type Limits } from './limits.ts';
import type { FaceContext, FaceMount } from './face-endpoint.ts';
import { createRestHandler } from './rest.ts';
import type { Route } from './route.ts';
import { createRouter } from './router.ts';
import { createClientIp, trustedSet } from './ip.ts';
import { ALL, ALL_ADMIN, createWsGateway } from './ws-gateway.ts';
import { storeChangedFrame } from './frames.ts';
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
  /** The enabled faces (app.ts), each answering the paths it matches, tried in order; REST answers the rest. */
  faces: readonly FaceMount[];
  /** Served at /inspect/ws when given. */
  inspect?: InspectHub | undefined;
  follower: TurnFollower;
  /** Sent in the `hello` frame; read once a socket opens. */
  storeId: () => string;
}

/** The front end: REST under /api, the WebSocket API at /, and the faces' mounts (/mcp, /a2a, AG-UI), on `deps.engine`. */
export function createFrontEnd(deps: FrontEndDeps) {
  const { config, log } = deps;
  const limitsConfig = config.server.limits;
  const { engine, fallback } = deps.engine;
  const limits = deps.limits ?? createLimits(limitsConfig, deps.clock);
  const trusted = trustedSet(config.server.trustedProxies);
  const app = engine.createApp({
    connections: connectionGate(limits.httpConnections, (address) => trusted.has(address), deps.clock),
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
          slowReaderBytes: limitsConfig.slowReaderBytes,
          ids: deps.ids,
          follower: deps.follower,
          storeId: deps.storeId,
          clientTools: config.agUi.clientTools,
        })
      : undefined;
  const faceContext: FaceContext = {
    ...endpoint,
    ...(deps.metrics && { metrics: deps.metrics }),
    limiter: limits.rest,
    mayApprove: (principal: Principal) => auth.allows(principal, 'approve'),
  };
  const faces = deps.faces.map((face) => ({ match: face.match, handler: face.serve(faceContext) }));

  const inspectWs = deps.inspect ? createInspectWs({ hub: deps.inspect, ...endpoint }) : undefined;
  if (inspectWs) app.websocket('/inspect/ws', inspectWs.route);
  if (gateway) app.websocket('/', gateway.route);
  // Each face answers the unknown paths under it too.
  const serve: HttpHandler = (req, res) => (faces.find((face) => face.match(req.path))?.handler ?? rest)(req, res);
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
    /** Tells every open WebSocket connection at `/` the store's new identity (`storeChanged`). */
    storeChanged: (change: { storeId: string; previousStoreId: string }): void => {
      const text = JSON.stringify(storeChangedFrame(change));
      if (gateway) for (const topic of [ALL, ALL_ADMIN]) app.publish(topic, text);
    },
    /** Answers a request in process, without listening (engine/inject.ts). */
    inject: createInject(serve),
  };
}

export type FrontEnd = ReturnType<typeof createFrontEnd>;
