import type { us_listen_socket } from 'uWebSockets.js';
import type { AppBus } from '../bus/app-bus.ts';
import type { IdSource } from '../bus/envelope.ts';
import type { AgentConfig } from '../config/schema.ts';
import type { Logger } from '../log/index.ts';
import { createAuth } from './auth.ts';
import { createCors } from './cors.ts';
import { engine, uWS } from './engine.ts';
import { createLimits } from './limits.ts';
import { createRestHandler } from './rest.ts';
import type { Route } from './route.ts';
import { createRouter } from './router.ts';
import { createWsGateway } from './ws-gateway.ts';

export interface FrontEndDeps {
  config: AgentConfig;
  bus: AppBus;
  log: Logger;
  ids: IdSource;
  routes: Route[];
}

export interface FrontEnd {
  engine: typeof engine;
  /** Binds and starts serving; resolves with the bound port (useful with port 0). */
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting, closes WebSockets with 1001. Idempotent. */
  close(): void;
  /** Open WebSocket connections. */
  connections(): number;
}

/** The uWebSockets.js front end: REST under /api, the WebSocket API at /. */
export function createFrontEnd(deps: FrontEndDeps): FrontEnd {
  const { config, log } = deps;
  const limitsConfig = config.server.limits;
  const app = uWS.App();
  const cors = createCors(config.server.cors);
  const limits = createLimits(limitsConfig);
  const auth = createAuth(config.server.auth.apiKey);
  let closing = false;
  let listenSocket: us_listen_socket | undefined;

  const rest = createRestHandler({
    bus: deps.bus,
    log,
    router: createRouter(deps.routes),
    cors,
    limiter: limits.rest,
    auth,
    maxBodyBytes: limitsConfig.maxBodyBytes,
    isClosing: () => closing,
  });
  const gateway = createWsGateway(app, {
    bus: deps.bus,
    log,
    cors,
    auth,
    limits,
    maxPayloadBytes: limitsConfig.maxBodyBytes,
    ids: deps.ids,
    isClosing: () => closing,
  });

  app.ws('/', gateway.behavior);
  app.any('/api/*', rest);
  app.any('/api', rest);
  app.any('/*', rest);

  return {
    engine,
    listen(host, port) {
      return new Promise((resolve, reject) => {
        app.listen(host, port, (socket) => {
          if (!socket) return reject(new Error(`cannot listen on ${host}:${port}`));
          listenSocket = socket;
          const bound = uWS.us_socket_local_port(socket);
          log.info({ host, port: bound, engine }, `listening on http://${host}:${bound} (uWebSockets.js ${engine})`);
          resolve(bound);
        });
      });
    },
    close() {
      if (closing) return;
      closing = true;
      if (listenSocket) uWS.us_listen_socket_close(listenSocket);
      listenSocket = undefined;
      gateway.closeAll();
    },
    connections: () => gateway.size(),
  };
}
