/**
 * A loopback TCP proxy of the chaos run: every connection it accepts is piped to the port it points at when the
 * connection comes. `point(port)` moves it: connections open until then are cut (their clients reconnect, through it,
 * to the new port), as a failover moves clients to the promoted replica. `freeze()` stops moving bytes either way on
 * the connections open and to come (they stay open: a replication link through it lags, its acknowledgements stop);
 * `point` ends a freeze.
 */
import { createServer, connect, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** The port it pipes to now. */
  readonly target: number;
  point(port: number): void;
  freeze(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  let frozen = false;
  /** Stops a pair's bytes: unpiped (a drain never resumes it) and paused. */
  const stopPair = ([a, b]: [Socket, Socket]) => {
    a.unpipe(b);
    b.unpipe(a);
    a.pause();
    b.pause();
  };
  const server = createServer((client) => {
    const upstream = connect(proxy.target, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    for (const s of pair) {
      open.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        open.delete(s);
        pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      });
    }
    if (frozen) return stopPair(pair);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    for (const s of open) s.destroy();
    open.clear();
    pairs.clear();
  };
  const proxy: TcpProxy = {
    port: (server.address() as { port: number }).port,
    target,
    point(port) {
      frozen = false;
      (proxy as { target: number }).target = port;
      cut();
    },
    freeze() {
      frozen = true;
      for (const pair of pairs) stopPair(pair);
    },
    async close() {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
