/**
 * Requests and responses on node:http. A request's body is read from its stream when asked for. A
 * response is node's `ServerResponse`, or, for an upgrade request (node hands those over as a raw
 * socket), HTTP/1.1 written to that socket with `Connection: close`.
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { addressText } from './address.ts';
import type { Body, BodyRead, EngineRequest, EngineResponse, Headers } from './types.ts';

const NO_BODY: BodyRead = { ok: true, bytes: Buffer.alloc(0) };

/** A request target's path and query (without the `?`). */
export function splitUrl(url = '/'): { path: string; query: string } {
  const q = url.indexOf('?');
  return q < 0 ? { path: url, query: '' } : { path: url.slice(0, q), query: url.slice(q + 1) };
}

export class NodeRequest implements EngineRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly remoteAddress: string;

  constructor(
    private readonly req: IncomingMessage,
    /** An upgrade request's body is not read (node hands its socket over as it is). */
    private readonly readable = true,
  ) {
    this.method = req.method ?? 'GET';
    ({ path: this.path, query: this.query } = splitUrl(req.url));
    this.headers = req.headers as Record<string, string | undefined>;
    this.remoteAddress = addressText(req.socket.remoteAddress);
  }

  body(maxBytes: number): Promise<BodyRead> {
    const req = this.req;
    if (!this.readable || req.readableEnded) return Promise.resolve(NO_BODY);
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const onData = (chunk: Buffer) => {
        size += chunk.byteLength;
        if (size <= maxBytes) return void chunks.push(chunk);
        req.off('data', onData).resume(); // the rest is read and dropped
        resolve({ ok: false, reason: 'too-large' });
      };
      req.on('data', onData);
      req.once('end', () =>
        resolve({ ok: true, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) }),
      );
      req.once('close', () => resolve({ ok: false, reason: 'aborted' })); // after 'end' this settles nothing
    });
  }
}

const byteLength = (body: Body): number => (typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
/** No body, so no Content-Length (1xx, 204, 304). */
const bodyless = (status: number): boolean => status < 200 || status === 204 || status === 304;

/** Resolves once `stream` took what was written to it, or closed. */
function drainedOf(stream: {
  writableNeedDrain: boolean;
  once(event: 'drain' | 'close', fn: () => void): unknown;
  off(event: 'drain' | 'close', fn: () => void): unknown;
}): Promise<void> {
  if (!stream.writableNeedDrain) return Promise.resolve();
  return new Promise((resolve) => {
    const settle = () => {
      stream.off('drain', settle);
      stream.off('close', settle);
      resolve();
    };
    stream.once('drain', settle);
    stream.once('close', settle);
  });
}

/** What both responses share: the abort signal and the end. */
abstract class BaseResponse implements EngineResponse {
  private readonly aborter = new AbortController();
  protected done = false;
  get signal(): AbortSignal {
    return this.aborter.signal;
  }
  get ended(): boolean {
    return this.done;
  }
  protected left(): void {
    if (this.done) return;
    this.done = true;
    this.aborter.abort();
  }
  abstract send(status: number, headers: Headers, body?: Body): void;
  abstract head(status: number, headers: Headers): void;
  abstract write(chunk: Body): boolean;
  abstract drained(): Promise<void>;
  abstract end(): void;
}

export class NodeResponse extends BaseResponse {
  constructor(private readonly res: ServerResponse) {
    super();
    res.once('close', () => this.left());
  }
  send(status: number, headers: Headers, body: Body = ''): void {
    if (this.done) return;
    this.done = true;
    // Object.assign, not `{ ...headers, 'Content-Length': … }` (a property after a spread is V8's slow path on Node 20).
    this.res.writeHead(
      status,
      bodyless(status) ? headers : Object.assign({}, headers, { 'Content-Length': String(byteLength(body)) }),
    );
    this.res.end(body);
  }
  head(status: number, headers: Headers): void {
    if (!this.done) this.res.writeHead(status, headers);
  }
  write(chunk: Body): boolean {
    return this.done || this.res.write(chunk);
  }
  drained(): Promise<void> {
    return this.done ? Promise.resolve() : drainedOf(this.res);
  }
  end(): void {
    if (this.done) return;
    this.done = true;
    this.res.end();
  }
}

/** A response written to the raw socket of an upgrade request: HTTP/1.1, then the connection closes. */
export class SocketResponse extends BaseResponse {
  private headSent = false;
  constructor(protected readonly socket: Duplex) {
    super();
    socket.once('close', () => this.left());
    socket.on('error', () => undefined); // a reset peer: 'close' follows
  }
  /** The socket is another protocol's from now on: nothing more is written here. */
  protected handOver(): boolean {
    if (this.done || this.socket.destroyed) return false;
    this.done = true;
    return true;
  }
  private writeHead(status: number, headers: Headers, framing: string): void {
    this.headSent = true;
    let text = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n`;
    for (const key in headers) text += `${key}: ${headers[key]}\r\n`;
    this.socket.write(`${text}${framing}Connection: close\r\n\r\n`);
  }
  send(status: number, headers: Headers, body: Body = ''): void {
    if (this.done) return;
    this.done = true;
    this.writeHead(status, headers, bodyless(status) ? '' : `Content-Length: ${byteLength(body)}\r\n`);
    this.socket.end(body);
  }
  head(status: number, headers: Headers): void {
    if (!this.done && !this.headSent) this.writeHead(status, headers, 'Transfer-Encoding: chunked\r\n');
  }
  write(chunk: Body): boolean {
    const length = byteLength(chunk);
    if (this.done || length === 0) return true;
    this.socket.write(`${length.toString(16)}\r\n`);
    this.socket.write(chunk);
    return this.socket.write('\r\n');
  }
  drained(): Promise<void> {
    return this.done ? Promise.resolve() : drainedOf(this.socket);
  }
  end(): void {
    if (this.done) return;
    this.done = true;
    this.socket.end('0\r\n\r\n');
  }
}
