/**
 * A CONNECT tunnel through a forward proxy (RFC 9110 §9.3.6), for an https origin behind a proxy.
 *
 * Contracts:
 * - Resolves with the socket to the proxy once it answered the CONNECT with a 2xx head and nothing after it; TLS
 *   to the origin then runs inside it (pool.ts). The proxy's address is the operator's: nothing here checks it.
 * - Rejects (the socket destroyed) when the proxy cannot be reached within `timeoutMs`, answers anything but 2xx
 *   (`ProxyRefusal`, naming the proxy by its origin only: never its credentials), sends a malformed head
 *   (HttpFrameError) or closes; with an error named AbortError when `signal` aborts.
 */
import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { parseHead } from './frames.ts';

/** The proxy refused to open the tunnel (its status, e.g. 403 or 407). */
export class ProxyRefusal extends Error {
  constructor(
    readonly proxy: string,
    readonly status: number,
  ) {
    super(`the proxy ${proxy} answered the CONNECT with ${status}`);
    this.name = 'ProxyRefusal';
  }
}

/** `Proxy-Authorization` for a proxy URL with credentials (`http://user:pass@host:port`), else undefined. */
export function proxyAuthorization(proxy: URL): string | undefined {
  if (!proxy.username && !proxy.password) return undefined;
  const pair = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return `Basic ${Buffer.from(pair).toString('base64')}`;
}

const MAX_CONNECT_HEAD = 16 * 1024;

export function openTunnel(
  proxy: URL,
  to: { host: string; port: number },
  options: { timeoutMs: number; signal: AbortSignal; tls?: ConnectionOptions | undefined },
): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const host = proxy.hostname.startsWith('[') ? proxy.hostname.slice(1, -1) : proxy.hostname;
    const port = Number(proxy.port) || (proxy.protocol === 'https:' ? 443 : 80);
    const socket: Socket =
      proxy.protocol === 'https:'
        ? tlsConnect({ host, port, ...(isIP(host) ? {} : { servername: host }), ...options.tls })
        : tcpConnect({ host, port });
    const authority = isIP(to.host) === 6 ? `[${to.host}]:${to.port}` : `${to.host}:${to.port}`;
    const auth = proxyAuthorization(proxy);
    socket.write(
      `CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n${auth ? `proxy-authorization: ${auth}\r\n` : ''}\r\n`,
      'latin1',
    );
    let head: Buffer = Buffer.alloc(0);
    const fail = (err: Error): void => {
      done();
      socket.destroy();
      reject(
        options.signal.aborted ? Object.assign(new Error('the request was aborted'), { name: 'AbortError' }) : err,
      );
    };
    const onData = (data: Buffer): void => {
      const scanned = head.length;
      head = head.length === 0 ? data : Buffer.concat([head, data]);
      try {
        const answer = parseHead(head, scanned);
        if (!answer) {
          if (head.length > MAX_CONNECT_HEAD) fail(new Error(`the proxy ${proxy.origin} sent an oversized head`));
          return;
        }
        if (answer.statusCode < 200 || answer.statusCode >= 300)
          return fail(new ProxyRefusal(proxy.origin, answer.statusCode));
        if (answer.length !== head.length)
          return fail(new Error(`the proxy ${proxy.origin} sent bytes after its CONNECT answer`));
        done();
        socket.setTimeout(0);
        resolve(socket);
      } catch (err) {
        fail(err as Error);
      }
    };
    const onClose = (): void =>
      fail(Object.assign(new Error(`the proxy ${proxy.origin} closed the tunnel`), { code: 'ECONNRESET' }));
    const onTimeout = (): void =>
      fail(
        Object.assign(new Error(`could not open a tunnel through ${proxy.origin} within ${options.timeoutMs} ms`), {
          code: 'ETIMEDOUT',
        }),
      );
    const onAbort = (): void => fail(new Error('aborted'));
    const done = (): void => {
      socket.off('data', onData).off('error', fail).off('close', onClose).off('timeout', onTimeout);
      options.signal.removeEventListener('abort', onAbort);
    };
    socket.setTimeout(options.timeoutMs);
    socket.on('data', onData).on('error', fail).on('close', onClose).on('timeout', onTimeout);
    options.signal.addEventListener('abort', onAbort, { once: true });
  });
}
