/**
 * The engine on uWebSockets.js (the native addon). Only this file loads it, and only on demand:
 * `loadUws` rejects when the addon cannot load on this machine (no build for this Node, or a C
 * library too old for the binary), so the caller can choose the node engine instead.
 *
 * uWS's request, response and WebSocket objects are passed to the front end as they are: our types
 * (`types.ts`) are a subset of theirs. Only the app is wrapped, for `listen` and `close`.
 */
import { createRequire } from 'node:module';
import type * as UwsModule from 'uWebSockets.js';
import type { TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { countConnections } from './uws-connections.ts';
import type { Engine, EngineApp, EngineOptions, WebSocketBehavior } from './types.ts';

type Uws = typeof UwsModule;

/** uWS's ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT: bind without SO_REUSEPORT. */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/**
 * Loads the addon; throws when it cannot load here. With require, not import(): on Node 20 an addon
 * loader (CommonJS) that throws under an ES module import also surfaces as an uncaught exception, even
 * when the import's rejection is handled.
 */
export function loadUws(): Engine {
  const uWS = createRequire(import.meta.url)('uWebSockets.js') as Uws;
  // Packages that carry a JS emulation fall back to it silently; it cannot serve agentd (no peer addresses, headers or user data).
  if (typeof (uWS as { getParts?: unknown }).getParts !== 'function') {
    throw new Error('uWebSockets.js loaded its JS fallback, not the native addon');
  }
  return { name: 'uws', label: 'uWebSockets.js', createApp: (options) => wrapApp(uWS, uWS.App(), options) };
}

function wrapApp(uWS: Uws, app: TemplatedApp, options: EngineOptions = {}): EngineApp {
  let listenSocket: us_listen_socket | undefined;
  const counted = options.connections && countConnections(app, options.connections);
  const wrapped: EngineApp = {
    any(pattern, handler) {
      app.any(pattern, counted ? counted.http(handler) : handler);
      return wrapped;
    },
    ws(pattern, behavior) {
      const served = counted ? counted.ws(behavior as WebSocketBehavior<unknown>) : behavior;
      app.ws(pattern, served as unknown as Parameters<TemplatedApp['ws']>[1]);
      return wrapped;
    },
    publish: (topic, message) => app.publish(topic, message),
    listen(host, port, { shared }) {
      return new Promise((resolve, reject) => {
        // uWS binds with SO_REUSEPORT unless told otherwise: exclusive, so a second instance cannot share the port.
        const withOptions = app as unknown as { listen(host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void): void };
        withOptions.listen(host, port, shared ? 0 : LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
          if (!socket) return reject(new Error(`cannot listen on ${host}:${port}: the address is already in use or not available`));
          listenSocket = socket;
          resolve(uWS.us_socket_local_port(socket));
        });
      });
    },
    close() {
      if (listenSocket) uWS.us_listen_socket_close(listenSocket);
      listenSocket = undefined;
    },
  };
  return wrapped;
}
