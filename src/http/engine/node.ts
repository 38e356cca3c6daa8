/**
 * The engine on Node's own sockets and `ws`, for machines where the uWebSockets.js addon cannot load.
 *
 * - HTTP/1.1 is served on `node:net` sockets (http1-server/, its own package-shaped folder): `node:http`'s request and response objects
 *   cost a REST request as much again as all of agentd's own work (bench/README.md, issue 41).
 * - Requests go to the app's one handler; an upgrade request to a WebSocket route goes to its route, which
 *   accepts (the socket goes to `ws`) or refuses with an answer that closes the connection. An upgrade request
 *   to any other path is served as an ordinary request, then the connection closes.
 * - The connection gate sees every TCP connection before anything is read from it; one it refuses is not
 *   counted, its first request is answered with the gate's refusal (429), then it closes.
 * - `listen` binds exclusively unless `shared`: in a `node:cluster` worker a shared listen goes through
 *   the primary, which hands connections to the workers in turn (what `--workers` needs on every Node
 *   line; SO_REUSEPORT in node's `listen` exists only from 22.12/23.1 on).
 */
import type { IncomingMessage } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { addressText } from './address.ts';
import {
  Connections,
  Http1Connection,
  NODE_LIMITS,
  type ConnectionLimits,
  type ConnectionServer,
  type Exchange,
  type RequestHead,
} from './http1-server/index.ts';
import { NodeRequest, NodeResponse } from './node-http.ts';
import { answers, Corks } from './corks.ts';
import { NodeUpgradeResponse, serveSocket, Topics } from './node-ws.ts';
import type { ConnectionGate, Engine, EngineApp, EngineOptions, HttpHandler, WebSocketRoute } from './types.ts';

/** A refused connection waits this long at most for its request (it is not counted: it may not linger). */
const REFUSED_WAIT_MS = 2_000;

const refusedLimits = (limits: ConnectionLimits): ConnectionLimits => ({
  ...limits,
  keepAliveMs: Math.min(limits.keepAliveMs, REFUSED_WAIT_MS),
  headersTimeoutMs: Math.min(limits.headersTimeoutMs, REFUSED_WAIT_MS),
});

/** The server of a connection the gate refused: its first request gets `answer` and `Connection: close`. */
const refusing = (answer: ReturnType<ConnectionGate['refusal']>): ConnectionServer => ({
  closing: true,
  serve: (_head, exchange) => new NodeResponse(exchange, true).send(answer.status, answer.headers, answer.body),
});

export const nodeEngine: Engine = {
  name: 'node',
  label: 'node:net + ws',
  createApp: (options) => new NodeApp(options),
};

interface Route {
  route: WebSocketRoute<unknown>;
  server: WebSocketServer;
}

/** The node engine's app; `limits` other than node:http's are for tests. */
export class NodeApp implements EngineApp, ConnectionServer {
  private handler: HttpHandler = (_req, res) => res.send(404, {});
  private readonly routes = new Map<string, Route>();
  private readonly topics = new Topics();
  /** WebSocket frames of one tick, written together (node-ws.ts). */
  private readonly corks = new Corks((flush) => process.nextTick(flush));
  private readonly connections = new Connections();
  private readonly server: Server;
  private listening = false;
  /** Stopping: answers close their connections. */
  closing = false;
  /** Gives an admitted connection back to the gate (once): when it closes, or becomes a WebSocket. */
  private readonly releases = new WeakMap<Socket, () => void>();

  constructor({ connections }: EngineOptions = {}, limits: ConnectionLimits = NODE_LIMITS) {
    this.server = createServer((socket) => {
      const address = addressText(socket.remoteAddress);
      const refused = connections && !this.admit(socket, address, connections);
      const server = refused ? refusing(connections.refusal(address)) : this;
      const connection = new Http1Connection(socket, address, server, refused ? refusedLimits(limits) : limits, (c) =>
        this.connections.remove(c),
      );
      this.connections.add(connection);
    });
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
    this.routes.set(path, { route, server });
  }

  publish(topic: string, text: string): void {
    this.topics.publish(topic, text);
  }

  /** A request read off a connection (http1-server/connection.ts). */
  serve(head: RequestHead, exchange: Exchange): void {
    const req = new NodeRequest(exchange);
    const ws = head.upgrade ? this.routes.get(req.path) : undefined;
    if (!ws || head.method !== 'GET' || head.headers.upgrade?.toLowerCase() !== 'websocket')
      return this.handler(req, new NodeResponse(exchange, head.upgrade));
    const socket = exchange.connection.socket;
    const res = new NodeUpgradeResponse<unknown>(exchange, (data) => {
      const rest = exchange.connection.handOver(exchange);
      if (!rest) return;
      this.releases.get(socket)?.(); // a WebSocket from now on: the front end counts it
      // `ws` reads only the method, the target and the fields of the request.
      const upgrade = { method: head.method, url: head.target, headers: head.headers } as unknown as IncomingMessage;
      ws.server.handleUpgrade(upgrade, socket, rest, (client) =>
        serveSocket(ws.route, client, socket, data, this.topics, this.corks),
      );
      socket.resume();
    });
    ws.route.upgrade(req, res);
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
    this.closing = true;
    this.server.close();
    answers.flush(); // no answer held for the loop's end is lost
    this.connections.closeIdle();
  }

  private admit(socket: Socket, address: string, gate: ConnectionGate): boolean {
    if (!gate.open(address)) return false;
    let counted = true;
    const release = () => {
      if (counted) gate.close(address);
      counted = false;
    };
    socket.once('close', release);
    this.releases.set(socket, release);
    return true;
  }
}
