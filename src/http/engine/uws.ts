/**
 * The engine on uWebSockets.js (the native addon). Only this file loads it, and only on demand:
 * `loadUws` throws when the addon cannot load on this machine (no build for this Node, or a C library
 * too old for the binary), so the caller can choose the node engine instead. Requests and responses:
 * uws-http.ts; WebSockets and how a slow reader's close reaches it: uws-socket.ts; the connection cap:
 * uws-connections.ts.
 */
import { createRequire } from 'node:module';
import type * as UwsModule from 'uWebSockets.js';
import type {
  HttpRequest as UwsRequest,
  HttpResponse as UwsResponse,
  TemplatedApp,
  us_listen_socket,
  us_socket_context_t,
  WebSocket as UwsWebSocket,
} from 'uWebSockets.js';
import { formatIp } from './address.ts';
import type { Engine, EngineApp, EngineOptions, HttpHandler, WebSocketRoute } from './types.ts';
import { countConnections } from './uws-connections.ts';
import { UwsHttpRequest, UwsHttpResponse, UwsUpgradeResponse, type Holder, type RequestHooks } from './uws-http.ts';
import { UwsSocket } from './uws-socket.ts';

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
  return { name: 'uws', label: 'uWebSockets.js', createApp: (options) => new UwsApp(uWS, options) };
}

const socketOf = <Data>(ws: UwsWebSocket<Holder<Data>>) => ws.getUserData().socket as UwsSocket<Data>;

class UwsApp implements EngineApp {
  private readonly app: TemplatedApp;
  private listenSocket: us_listen_socket | undefined;
  /** The ledger's hooks for a request from an address, when connections are counted. */
  private readonly counted: ((address: string) => RequestHooks) | undefined;

  constructor(
    private readonly uWS: Uws,
    { connections }: EngineOptions = {},
  ) {
    this.app = uWS.App();
    this.counted = connections && countConnections(this.app, connections);
  }

  http(handler: HttpHandler): void {
    this.app.any('/*', (res: UwsResponse, req: UwsRequest) => {
      const address = formatIp(res.getRemoteAddress());
      const request = new UwsHttpRequest(req, res, address);
      handler(request, new UwsHttpResponse(res, request.reader, this.counted?.(address), request.closing));
    });
  }

  websocket<Data>(path: string, route: WebSocketRoute<Data>): void {
    this.app.ws<Holder<Data>>(path, {
      maxPayloadLength: route.maxPayloadBytes,
      idleTimeout: route.idleTimeoutSec,
      sendPingsAutomatically: true,
      maxBackpressure: route.maxBackpressureBytes + route.maxPayloadBytes, // a largest frame apart (types.ts)
      closeOnBackpressureLimit: false,
      upgrade: (res: UwsResponse, req: UwsRequest, context: us_socket_context_t) => {
        const address = formatIp(res.getRemoteAddress());
        const request = new UwsHttpRequest(req, res, address);
        route.upgrade(request, new UwsUpgradeResponse<Data>(res, request.headers, context, this.counted?.(address)));
      },
      open: (ws) => {
        const holder = ws.getUserData();
        const socket = new UwsSocket(ws, holder.data, route);
        holder.socket = socket;
        route.open?.(socket);
      },
      message: (ws, message) => socketOf(ws).received(message),
      drain: (ws) => socketOf(ws).drained(),
      dropped: (ws) => socketOf(ws).dropped(),
      close: (ws, code, message) => socketOf(ws).ended(code, Buffer.from(message).toString('utf8')),
    });
  }

  publish(topic: string, text: string): void {
    this.app.publish(topic, text);
  }

  async listen(host: string, port: number, { shared }: { shared: boolean }): Promise<number> {
    if (!shared || port !== 0) return this.bind(host, port, shared ? 0 : LIBUS_LISTEN_EXCLUSIVE_PORT);
    // uSockets sets SO_REUSEPORT only on a non-zero port: a shared listen on port 0 takes the number the kernel picks
    // and binds it again, shareable, for the other workers (a few tries, should another socket take it meanwhile).
    for (let attempt = 1; ; attempt++) {
      const picked = await this.bind(host, 0, LIBUS_LISTEN_EXCLUSIVE_PORT);
      this.close();
      try {
        return await this.bind(host, picked, 0);
      } catch (err) {
        if (attempt === 3) throw err;
      }
    }
  }

  /** Binds with uSockets' `options` (0: SO_REUSEPORT, `LIBUS_LISTEN_EXCLUSIVE_PORT`: without); resolves to the port. */
  private bind(host: string, port: number, options: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const withOptions = this.app as unknown as {
        listen(host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void): void;
      };
      withOptions.listen(host, port, options, (socket) => {
        if (!socket)
          return reject(new Error(`cannot listen on ${host}:${port}: the address is already in use or not available`));
        this.listenSocket = socket;
        resolve(this.uWS.us_socket_local_port(socket));
      });
    });
  }

  close(): void {
    if (this.listenSocket) this.uWS.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
  }
}
