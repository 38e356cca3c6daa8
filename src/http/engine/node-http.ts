/**
 * Requests and responses of the node engine's HTTP/1.1 connections (http1-server/connection.ts). A request's body is read
 * from its connection when asked for. A response is written to the socket as HTTP/1.1: `send` with its length,
 * `head`/`write`/`end` chunked (length-delimited when the headers give one; until the close for an HTTP/1.0
 * client), `Date` and the connection's `Connection` fields added, no body for HEAD, 1xx, 204 and 304. What a response
 * writes leaves at the end of the event loop's iteration (corks.ts).
 */
import { STATUS_CODES } from 'node:http';
import { corkUntilLoopEnd } from './corks.ts';
import { FIELD_NAME, type Exchange } from './http1-server/index.ts';
import type { Body, BodyRead, EngineRequest, EngineResponse, Headers } from './types.ts';

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

  constructor(private readonly exchange: Exchange) {
    const { head } = exchange;
    this.method = head.method;
    ({ path: this.path, query: this.query } = splitUrl(head.target));
    this.headers = head.headers;
    this.remoteAddress = exchange.connection.remoteAddress;
  }

  body(maxBytes: number): Promise<BodyRead> {
    return this.exchange.connection.readBody(this.exchange, maxBytes);
  }
}

const byteLength = (body: Body): number => (typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
/** No body, so no Content-Length (1xx, 204, 304). */
const bodyless = (status: number): boolean => status < 200 || status === 204 || status === 304;
/** Fields the response frames itself: the caller's are dropped. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);
/** What node:http refuses in a field value (a CR or LF would split the response). */
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const NOT_ASCII = /[\x80-\xff]/;

let dateSecond = 0;
let dateText = '';
/** The `Date` field's value, made once a second. */
function httpDate(): string {
  const now = Date.now();
  if (now - dateSecond >= 1000 || now < dateSecond) {
    dateSecond = now - (now % 1000);
    dateText = new Date(dateSecond).toUTCString();
  }
  return dateText;
}

/** The head's fields from `headers`; throws (as node:http does) on a name or value that is not a field's. */
function fields(headers: Headers): string {
  let text = '';
  for (const name in headers) {
    const value = String(headers[name]);
    if (!FIELD_NAME.test(name) || BAD_VALUE.test(value))
      throw new TypeError(`invalid response header ${JSON.stringify(name)}`);
    if (!FRAMING.has(name.toLowerCase())) text += `${name}: ${value}\r\n`;
  }
  return text;
}

type Framing = 'length' | 'chunked' | 'close';

export class NodeResponse implements EngineResponse {
  private aborter: AbortController | undefined;
  private gone = false;
  private done = false;
  private framing: Framing | undefined;
  private keepAlive = false;

  constructor(
    protected readonly exchange: Exchange,
    /** Answer with `Connection: close` whatever the request allows (a refused upgrade). */
    private readonly closes = false,
  ) {
    exchange.left = () => this.left();
  }

  get signal(): AbortSignal {
    if (!this.aborter) {
      this.aborter = new AbortController();
      if (this.gone) this.aborter.abort();
    }
    return this.aborter.signal;
  }

  get ended(): boolean {
    return this.done;
  }

  /** The peer left before the end. */
  private left(): void {
    if (this.done) return;
    this.done = true;
    this.gone = true;
    this.aborter?.abort();
  }

  /** Claims the response for an upgrade's new owner: nothing more is written here. */
  protected claim(): boolean {
    if (this.done) return false;
    this.done = true;
    return true;
  }

  send(status: number, headers: Headers, body: Body = ''): void {
    if (this.done || this.framing) return;
    const withBody = !bodyless(status);
    const head = this.headText(status, headers, withBody ? `Content-Length: ${byteLength(body)}\r\n` : '');
    this.done = true;
    const socket = this.exchange.connection.socket;
    corkUntilLoopEnd(socket);
    if (!withBody || this.exchange.head.method === 'HEAD' || byteLength(body) === 0) socket.write(head, 'latin1');
    else if (typeof body === 'string' && !NOT_ASCII.test(head)) socket.write(head + body);
    else {
      socket.write(head, 'latin1');
      socket.write(body);
    }
    this.exchange.connection.finish(this.exchange, this.keepAlive);
  }

  head(status: number, headers: Headers): void {
    if (this.done || this.framing) return;
    const length = Object.entries(headers).find(([k]) => k.toLowerCase() === 'content-length')?.[1];
    this.framing = length !== undefined ? 'length' : this.exchange.head.minor === 1 ? 'chunked' : 'close';
    const own =
      this.framing === 'length'
        ? `Content-Length: ${length}\r\n`
        : this.framing === 'chunked'
          ? 'Transfer-Encoding: chunked\r\n'
          : '';
    const socket = this.exchange.connection.socket;
    corkUntilLoopEnd(socket);
    socket.write(this.headText(status, headers, own), 'latin1');
  }

  write(chunk: Body): boolean {
    const socket = this.exchange.connection.socket;
    const size = byteLength(chunk);
    if (this.done || !this.framing || size === 0 || this.exchange.head.method === 'HEAD') return true;
    corkUntilLoopEnd(socket);
    if (this.framing !== 'chunked') return socket.write(chunk);
    if (typeof chunk === 'string') return socket.write(`${size.toString(16)}\r\n${chunk}\r\n`);
    socket.write(`${size.toString(16)}\r\n`, 'latin1');
    socket.write(chunk);
    return socket.write('\r\n', 'latin1');
  }

  drained(): Promise<void> {
    const socket = this.exchange.connection.socket;
    if (this.done || !socket.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const settle = () => {
        socket.off('drain', settle);
        socket.off('close', settle);
        resolve();
      };
      socket.once('drain', settle);
      socket.once('close', settle);
    });
  }

  end(): void {
    if (this.done) return;
    if (!this.framing) return this.send(200, {});
    this.done = true;
    if (this.framing === 'chunked' && this.exchange.head.method !== 'HEAD')
      this.exchange.connection.socket.write('0\r\n\r\n', 'latin1');
    this.exchange.connection.finish(this.exchange, this.keepAlive);
  }

  /** The status line and fields, with the framing field `own`, `Date` and the connection's fields. */
  private headText(status: number, headers: Headers, own: string): string {
    const caller = fields(headers);
    this.keepAlive = !this.closes && this.framing !== 'close' && this.exchange.connection.mayKeepAlive(this.exchange);
    const connection = this.keepAlive
      ? `Connection: keep-alive\r\nKeep-Alive: timeout=${this.exchange.connection.keepAliveSeconds}\r\n`
      : 'Connection: close\r\n';
    return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${caller}${own}Date: ${httpDate()}\r\n${connection}\r\n`;
  }
}
