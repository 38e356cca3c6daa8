/**
 * Requests and responses on uWebSockets.js. uWS hands a request over only during its handler call and
 * a body only to an `onData` attached by then, and it writes through `cork`; so the request is copied
 * at once, a body is taken as it comes (paused past a first part until it is asked for), every write is
 * corked, and an abort handler is always attached.
 */
import { STATUS_CODES } from 'node:http';
import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse, us_socket_context_t } from 'uWebSockets.js';
import type { Body, BodyRead, EngineRequest, EngineResponse, Headers, UpgradeResponse } from './types.ts';

/** What a request's body may hold in memory before anyone asked for it: then the socket is paused. */
const UNASKED_BYTES = 64 * 1024;
const NO_BODY: BodyRead = { ok: true, bytes: Buffer.alloc(0) };

/** How one request ends, for the connection ledger (uws-connections.ts). */
export interface RequestHooks {
  ended(closing: boolean): void;
  aborted(): void;
  upgraded(): void;
}

const statusLines = new Map<number, string>();
const statusLine = (status: number): string => {
  let line = statusLines.get(status);
  if (!line) statusLines.set(status, (line = `${status} ${STATUS_CODES[status] ?? ''}`.trim()));
  return line;
};

/** A body as uWS delivers it: chunks copied as they come (uWS reuses their memory after each callback). */
export class BodyReader {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private limit = Infinity;
  private result: BodyRead | undefined;
  private waiting: ((read: BodyRead) => void) | undefined;
  private complete = false;
  private paused = false;
  /** The response ended: uWS may still hand over the rest of the body, which is dropped. */
  private finished = false;

  constructor(private readonly res: UwsResponse) {
    res.onData((chunk, last) => this.take(chunk, last));
  }

  read(maxBytes: number): Promise<BodyRead> {
    this.limit = maxBytes;
    if (this.size > maxBytes) this.settle({ ok: false, reason: 'too-large' });
    else if (this.complete) this.settle({ ok: true, bytes: Buffer.concat(this.chunks, this.size) });
    if (this.result) return Promise.resolve(this.result);
    this.resume();
    return new Promise((resolve) => (this.waiting = resolve));
  }

  abort(): void {
    this.settle({ ok: false, reason: 'aborted' });
  }

  /** Before the response ends: what is left of an unread body is dropped, read on (uWS reads only while not paused). */
  finish(): void {
    this.resume();
    this.finished = true;
    this.abort();
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.res.resume();
  }

  private take(chunk: ArrayBuffer, last: boolean): void {
    if (this.finished) return;
    this.size += chunk.byteLength;
    if (this.result === undefined) {
      if (this.size > this.limit) this.settle({ ok: false, reason: 'too-large' });
      else this.chunks.push(Buffer.from(chunk.slice(0)));
    }
    if (last) {
      this.complete = true;
      if (this.waiting)
        this.settle({
          ok: true,
          bytes: this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size),
        });
    } else if (!this.waiting && this.result === undefined && !this.paused && this.size >= UNASKED_BYTES) {
      this.paused = true;
      this.res.pause();
    }
  }

  private settle(read: BodyRead): void {
    if (this.result) return;
    this.result = read;
    this.chunks.length = 0;
    this.waiting?.(read);
    this.waiting = undefined;
  }
}

export class UwsHttpRequest implements EngineRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly headers: Record<string, string>;
  /** Its body, when it has one (`content-length` or `transfer-encoding`), taken from now on. */
  readonly reader: BodyReader | undefined;

  constructor(
    req: UwsRequest,
    res: UwsResponse,
    readonly remoteAddress: string,
  ) {
    this.method = req.getCaseSensitiveMethod();
    this.path = req.getUrl();
    this.query = req.getQuery() ?? '';
    const headers: Record<string, string> = {};
    req.forEach((key, value) => {
      const seen = headers[key];
      headers[key] = seen === undefined ? value : `${seen}, ${value}`;
    });
    this.headers = headers;
    const length = headers['content-length'];
    if ((length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined)
      this.reader = new BodyReader(res);
  }

  /** uWS closes the connection after the response when the request says `Connection: close` (any 5-letter value). */
  get closing(): boolean {
    return this.headers.connection?.length === 5;
  }

  body(maxBytes: number): Promise<BodyRead> {
    return this.reader ? this.reader.read(maxBytes) : Promise.resolve(NO_BODY);
  }
}

export class UwsHttpResponse implements EngineResponse {
  protected done = false;
  private left = false;
  private aborter: AbortController | undefined;
  private writable: (() => void) | undefined;
  /** The last write filled the socket's buffer: more once `onWritable` says so. */
  private behind = false;

  constructor(
    protected readonly res: UwsResponse,
    /** The body of the request, while it may be unread. */
    private readonly reader: BodyReader | undefined,
    protected readonly hooks: RequestHooks | undefined,
    /** The request asked to close the connection after the response (uWS then does). */
    private readonly closing: boolean,
  ) {
    res.onAborted(() => this.abort());
  }

  get signal(): AbortSignal {
    if (!this.aborter) {
      this.aborter = new AbortController();
      if (this.left) this.aborter.abort();
    }
    return this.aborter.signal;
  }

  get ended(): boolean {
    return this.done;
  }

  send(status: number, headers: Headers, body: Body = ''): void {
    this.finish(() => {
      this.writeHead(status, headers);
      this.res.end(body);
    });
  }

  head(status: number, headers: Headers): void {
    if (!this.done) this.res.cork(() => this.writeHead(status, headers));
  }

  write(chunk: Body): boolean {
    if (this.done) return true;
    let accepted = true;
    this.res.cork(() => (accepted = this.res.write(chunk)));
    this.behind = !accepted;
    return accepted;
  }

  drained(): Promise<void> {
    if (this.done || !this.behind) return Promise.resolve();
    return new Promise((resolve) => {
      this.writable = resolve;
      this.res.onWritable(() => {
        this.writable = undefined;
        this.behind = false;
        resolve();
        return true;
      });
    });
  }

  end(): void {
    this.finish(() => this.res.end());
  }

  /** Ends the response with what `write` writes (corked). */
  private finish(write: () => void): void {
    if (this.done) return;
    this.done = true;
    this.reader?.finish();
    this.res.cork(write);
    this.hooks?.ended(this.closing);
  }

  private writeHead(status: number, headers: Headers): void {
    this.res.writeStatus(statusLine(status));
    for (const key in headers) this.res.writeHeader(key, headers[key]!);
  }

  private abort(): void {
    this.left = true;
    this.done = true;
    this.hooks?.aborted();
    this.reader?.abort();
    this.aborter?.abort();
    this.writable?.();
  }
}

/** What a uWS WebSocket carries: the route's data, and our socket once it opened. */
export interface Holder<Data> {
  data: Data;
  socket?: unknown;
}

export class UwsUpgradeResponse<Data> extends UwsHttpResponse implements UpgradeResponse<Data> {
  constructor(
    res: UwsResponse,
    /** The upgrade request's headers (UwsHttpRequest copied them while uWS held the request). */
    private readonly headers: Record<string, string>,
    private readonly context: us_socket_context_t,
    hooks: RequestHooks | undefined,
  ) {
    super(res, undefined, hooks, false);
  }

  accept(data: Data): void {
    if (this.done) return;
    this.done = true;
    const { headers } = this;
    // Not inside `cork`: on uWS 20.57 an upgrade inside `cork` intermittently cut the new socket (1006) or lost its
    // first frames (seen with several apps in one process: test/int/redis-cluster.test.ts). `upgrade` writes the 101 itself.
    const holder: Holder<Data> = { data };
    this.res.upgrade(
      holder,
      headers['sec-websocket-key'] ?? '',
      headers['sec-websocket-protocol'] ?? '',
      headers['sec-websocket-extensions'] ?? '',
      this.context,
    );
    this.hooks?.upgraded();
  }
}
