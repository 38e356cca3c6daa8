/**
 * A small forward proxy on loopback for tests: `CONNECT host:port` tunnels (https targets) and absolute-form
 * requests (`GET http://host:port/path`, http targets), each counted. It reaches only 127.0.0.0/8 (`localhost` is
 * 127.0.0.1): any other target is answered 403, so nothing a test sends through it leaves the machine.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface ForwardProxy {
  /** `http://127.0.0.1:<port>` (with `user:pass@` when started with `auth`). */
  url: string;
  /** Every CONNECT authority it tunnelled to, in order. */
  tunnels: string[];
  /** Every absolute-form request it forwarded, as `METHOD url`. */
  forwarded: string[];
  /** Requests it refused (bad credentials: 407, a target off loopback: 403), as `STATUS target`. */
  refused: string[];
  close(): Promise<void>;
}

const LOOPBACK = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
const loopbackHost = (host: string): string | undefined =>
  host === 'localhost' ? '127.0.0.1' : LOOPBACK.test(host) ? host : undefined;

/** `auth`: `user:pass` the proxy demands as `Proxy-Authorization: Basic`. */
export async function startForwardProxy(options: { auth?: string } = {}): Promise<ForwardProxy> {
  const tunnels: string[] = [];
  const forwarded: string[] = [];
  const refused: string[] = [];
  const sockets = new Set<Socket>();
  const expected = options.auth && `Basic ${Buffer.from(options.auth).toString('base64')}`;
  const allowed = (req: IncomingMessage) => !expected || req.headers['proxy-authorization'] === expected;

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const target = new URL(req.url ?? '/', 'http://invalid');
    const host = loopbackHost(target.hostname);
    if (!allowed(req) || host === undefined || target.hostname === 'invalid') {
      const status = allowed(req) ? 403 : 407;
      refused.push(`${status} ${req.url}`);
      res.writeHead(status, { 'proxy-authenticate': 'Basic realm="test"' }).end();
      return;
    }
    forwarded.push(`${req.method} ${req.url}`);
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = request(
      { host, port: Number(target.port) || 80, method: req.method, path: target.pathname + target.search, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const [name = '', port = ''] = (req.url ?? '').split(/:(?=\d+$)/);
    const host = loopbackHost(name);
    if (!allowed(req) || host === undefined) {
      const status = allowed(req) ? 403 : 407;
      refused.push(`${status} ${req.url}`);
      client.end(`HTTP/1.1 ${status} Refused\r\nproxy-authenticate: Basic realm="test"\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    tunnels.push(req.url ?? '');
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${options.auth ? `${options.auth}@` : ''}127.0.0.1:${port}`,
    tunnels,
    forwarded,
    refused,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
