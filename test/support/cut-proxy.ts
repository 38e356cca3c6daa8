/**
 * A TCP proxy on loopback in front of a server, whose connections a test cuts at will (`cut()` destroys every open
 * one, both ways, as a dropped network would): a client behind it sees its sockets end mid-stream.
 */
import { createConnection, createServer, type Socket } from 'node:net';

export interface CutProxy {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Connections cut so far. */
  readonly cuts: number;
  /** Destroys every open connection; answers how many there were. */
  cut(): number;
  close(): Promise<void>;
}

export async function startCutProxy(targetPort: number): Promise<CutProxy> {
  const open = new Set<Socket>();
  let cuts = 0;
  const server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    open.add(client);
    open.add(upstream);
    const end = () => {
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get cuts() {
      return cuts;
    },
    cut() {
      const n = open.size;
      for (const s of [...open]) s.destroy();
      open.clear();
      cuts += n > 0 ? 1 : 0;
      return n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
