/**
 * A closed-loop HTTP/1.1 load generator on raw keep-alive sockets (like wrk without pipelining):
 * each connection sends a request, waits for the whole response, sends the next. Requests are
 * prebuilt bytes and responses are framed by Content-Length, so the generator costs a few µs per
 * request — node's http client would cost several times that and measure itself, not the server.
 */
import { connect, type Socket } from 'node:net';
import { Samples, type Summary } from './stats.ts';

export interface HttpLoadOptions {
  /** Several ports: connection `c` goes to `port[c % port.length]` (one load over separate servers). */
  port: number | number[];
  connections: number;
  /** Stop starting requests after this long. */
  durationMs?: number;
  /** Stop each connection after this many requests. */
  requestsPerConnection?: number;
  /** The raw request for connection `conn`'s `k`-th request. */
  request: (conn: number, k: number) => Buffer;
  /** Gives up (and counts an error) when a response takes longer. */
  timeoutMs?: number;
}

export interface HttpLoadResult {
  requests: number;
  errors: number;
  /** Responses whose status was not 2xx, by status. */
  statuses: Record<string, number>;
  wallMs: number;
  rps: number;
  latency: Summary;
  /** Latencies in completion order (ms), when `keep` was asked. */
  series?: number[];
}

/** Raw request bytes. */
export function rawRequest(method: string, path: string, body?: string, headers: Record<string, string> = {}): Buffer {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: keep-alive'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
}

const CRLF2 = Buffer.from('\r\n\r\n');

export async function httpLoad(opts: HttpLoadOptions, keep = false): Promise<HttpLoadResult> {
  const latency = new Samples();
  const series: number[] = [];
  const statuses: Record<string, number> = {};
  let requests = 0;
  let errors = 0;
  const t0 = performance.now();
  const deadline = opts.durationMs === undefined ? Infinity : t0 + opts.durationMs;
  const limit = opts.requestsPerConnection ?? Infinity;

  const runConnection = (conn: number) =>
    new Promise<void>((resolveConn) => {
      let k = 0;
      let sentAt = 0;
      let buf: Buffer | undefined;
      let timer: NodeJS.Timeout | undefined;
      const finish = () => {
        clearTimeout(timer);
        socket.destroy();
        resolveConn();
      };
      const send = () => {
        if (k >= limit || performance.now() >= deadline) return finish();
        const req = opts.request(conn, k++);
        sentAt = performance.now();
        if (opts.timeoutMs) {
          clearTimeout(timer);
          timer = setTimeout(() => {
            errors++;
            finish();
          }, opts.timeoutMs);
        }
        socket.write(req);
      };
      const port = Array.isArray(opts.port) ? opts.port[conn % opts.port.length]! : opts.port;
      const socket: Socket = connect({ host: '127.0.0.1', port, noDelay: true }, () => send());
      socket.on('error', () => {
        errors++;
        finish();
      });
      socket.on('data', (chunk: Buffer) => {
        buf = buf ? Buffer.concat([buf, chunk]) : chunk;
        const headEnd = buf.indexOf(CRLF2);
        if (headEnd < 0) return;
        const head = buf.toString('latin1', 0, headEnd);
        const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
        if (!m) {
          errors++;
          return finish();
        }
        const total = headEnd + 4 + Number(m[1]);
        if (buf.length < total) return;
        if (buf.length > total) {
          errors++;
          return finish();
        } // no pipelining: nothing may follow
        buf = undefined;
        const status = head.slice(9, 12);
        if (status[0] !== '2') statuses[status] = (statuses[status] ?? 0) + 1;
        const ms = performance.now() - sentAt;
        latency.push(ms);
        if (keep) series.push(ms);
        requests++;
        send();
      });
    });

  await Promise.all(Array.from({ length: opts.connections }, (_, i) => runConnection(i)));
  const wallMs = performance.now() - t0;
  return {
    requests,
    errors,
    statuses,
    wallMs,
    rps: Math.round((requests / wallMs) * 1000),
    latency: latency.summary(),
    ...(keep && { series }),
  };
}
