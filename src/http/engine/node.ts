/**
 * The engine on `node:http` and `ws`, for machines where the uWebSockets.js addon cannot load.
 *
 * - Requests go to the app's one handler; node hands upgrade requests over on their raw socket, so a
 *   WebSocket route's are answered there (node-ws.ts) and any other's are served by the handler,
 *   written to that socket (node-http.ts).
 * - The connection gate sees every TCP connection before node reads from it ('connection').
 * - `listen` binds exclusively unless `shared`: in a `node:cluster` worker a shared listen goes through
 *   the primary, which hands connections to the workers in turn (what `--workers` needs on every Node
 *   line; SO_REUSEPORT in node's `listen` exists only from 22.12/23.1 on).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { addressText } from './address.ts';
import { NodeRequest, NodeResponse, SocketResponse, splitUrl } from './node-http.ts';
import { Corks, NodeUpgradeResponse, serveSocket, Topics } from './node-ws.ts';
import type { ConnectionGate, Engine, EngineApp, EngineOptions, HttpHandler, WebSocketRoute } from './types.ts';

/** An idle keep-alive connection is closed after 10 s (the uWebSockets.js engine's time too). */
const KEEP_ALIVE_MS = 10_000;

export const nodeEngine: Engine = {
  name: 'node',
  label: 'node:http + ws',
  createApp: (options) => new NodeApp(options),
};

interface Route {
  route: WebSocketRoute<unknown>;
  server: WebSocketServer;
}

class NodeApp implements EngineApp {
  private handler: HttpHandler = (_req, res) => res.send(404, {});
  private readonly routes = new Map<string, Route>();
  private readonly topics = new Topics();
  /** Frames to one socket in one tick: one write (node-ws.ts). */
  private readonly corks = new Corks();
  private readonly server: Server;
  private listening = false;
  /** Gives an admitted connection back to the gate (once): when it closes, or becomes a WebSocket. */
  private readonly releases = new WeakMap<Socket, () => void>();

  constructor({ connections }: EngineOptions = {}) {
    this.server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS }, (req, res) =>
      this.handler(new NodeRequest(req), new NodeResponse(res)),
    );
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => this.upgrade(req, socket, head));
    if (connections) this.server.on('connection', (socket: Socket) => this.admit(socket, connections));
  }

  http(handler: HttpHandler): void {
    this.handler = handler;
  }

  websocket<Data>(path: string, route: WebSocketRoute<Data>): void {
    const server = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      perMessageDeflate: false,
      maxPayload: route.maxPayloadBytes,
    });
    this.routes.set(path, { route: route, server });
  }

  publish(topic: string, text: string): void {
    this.topics.publish(topic, text);
  }

  listen(host: string, port: number, { shared }: { shared: boolean }): Promise<number> {
    return new Promise((resolve, reject) => {
      const failed = (err: NodeJS.ErrnoException) =>
        reject(
          new Error(
            `cannot listen on ${host}:${port}: ${err.code === 'EADDRINUSE' ? 'the address is already in use' : err.code === 'EADDRNOTAVAIL' ? 'the address is not available' : err.message}`,
          ),
        );
      this.server.once('error', failed);
      this.server.listen({ host, port, exclusive: !shared }, () => {
        this.server.off('error', failed);
        this.server.on('error', () => undefined); // accept errors (EMFILE): node retries
        this.listening = true;
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  close(): void {
    if (!this.listening) return;
    this.listening = false;
    this.server.close();
    this.server.closeIdleConnections();
  }

  private admit(socket: Socket, gate: ConnectionGate): void {
    const address = addressText(socket.remoteAddress);
    if (!gate.open(address)) return void socket.destroy();
    let counted = true;
    const release = () => {
      if (counted) gate.close(address);
      counted = false;
    };
    socket.once('close', release);
    this.releases.set(socket, release);
  }

  private upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const ws = this.routes.get(splitUrl(req.url).path);
    if (!ws || req.method !== 'GET' || req.headers.upgrade?.toLowerCase() !== 'websocket') {
      return this.handler(new NodeRequest(req, false), new SocketResponse(socket));
    }
    const res = new NodeUpgradeResponse<unknown>(socket, (data) => {
      this.releases.get(socket)?.(); // a WebSocket from now on: the front end counts it
      ws.server.handleUpgrade(req, socket, head, (client) =>
        serveSocket(ws.route, client, socket, data, this.topics, this.corks),
      );
    });
    ws.route.upgrade(new NodeRequest(req, false), res);
  }
}
