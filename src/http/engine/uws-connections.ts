/**
 * The per-IP connection cap on uWebSockets.js: `app.filter` tells each connection's opening (with its
 * peer) and closing (without), and the ledger (uws-ledger.ts) attributes the closings from what the
 * requests show. A connection the gate refuses is closed at once, unanswered.
 */
import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse, TemplatedApp } from 'uWebSockets.js';
import { formatIp } from './address.ts';
import type { ConnectionGate, HttpHandler, HttpResponse, RecognizedString, UpgradeContext, WebSocketBehavior } from './types.ts';
import { ConnectionLedger, type LedgerToken } from './uws-ledger.ts';

/** uWS's timers tick every 4 s: a timeout of n seconds fires within n + 4. */
const TIMER_SLACK_MS = 5_000;
/** How long a connection may wait for a request (its first, or the next after a response). */
const WAIT_S = 10;

interface Timeouts {
  setIdleTimeout?(seconds: number): void;
  setResponseTimeout?(seconds: number): void;
}

/** A response that tells the ledger how its request ends. */
class CountedResponse implements HttpResponse {
  constructor(
    private readonly res: UwsResponse,
    private readonly ledger: ConnectionLedger,
    private readonly token: LedgerToken,
    /** The request asked to close the connection after the response (uWS does so for `Connection: close`). */
    private readonly closing: boolean,
  ) {}
  writeStatus(status: string): this {
    this.res.writeStatus(status);
    return this;
  }
  writeHeader(key: string, value: string): this {
    this.res.writeHeader(key, value);
    return this;
  }
  write(chunk: RecognizedString): boolean {
    return this.res.write(chunk);
  }
  end(body?: RecognizedString): this {
    this.res.end(body);
    this.ledger.requestEnded(this.token, this.closing);
    return this;
  }
  cork(cb: () => void): this {
    this.res.cork(cb);
    return this;
  }
  onAborted(handler: () => void): this {
    this.res.onAborted(() => {
      this.ledger.requestAborted(this.token);
      handler();
    });
    return this;
  }
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): this {
    this.res.onData(handler);
    return this;
  }
  onWritable(handler: (offset: number) => boolean): this {
    this.res.onWritable(handler);
    return this;
  }
  getRemoteAddress(): ArrayBuffer {
    return this.res.getRemoteAddress();
  }
  upgrade<UserData>(userData: UserData, key: string, protocol: string, extensions: string, context: UpgradeContext): void {
    this.res.upgrade(userData, key, protocol, extensions, context);
    this.ledger.upgraded(this.token);
  }
}

export function countConnections(app: TemplatedApp, gate: ConnectionGate) {
  const timeouts = app as unknown as Timeouts;
  // This package's uWS lets a connection wait 30 s by default; 10 s is upstream's and the node engine's.
  timeouts.setIdleTimeout?.(WAIT_S);
  timeouts.setResponseTimeout?.(WAIT_S);
  const ledger = new ConnectionLedger({ gate, waitMs: WAIT_S * 1000 + TIMER_SLACK_MS, now: Date.now });
  let refusing = false;
  app.filter((res, count) => {
    if (count !== 1) {
      if (!refusing) ledger.closed();
      return;
    }
    if (ledger.opened(formatIp(res.getRemoteAddress()))) return;
    refusing = true; // its close is reported inside close(): not one the ledger counted
    try {
      res.close();
    } finally {
      refusing = false;
    }
  });
  const counted = (res: UwsResponse, req: UwsRequest): HttpResponse =>
    new CountedResponse(res, ledger, ledger.requestStarted(formatIp(res.getRemoteAddress())), req.getHeader('connection').length === 5);
  return {
    http: (handler: HttpHandler) => (res: UwsResponse, req: UwsRequest) => handler(counted(res, req), req),
    ws: <UserData>(behavior: WebSocketBehavior<UserData>): WebSocketBehavior<UserData> => ({
      ...behavior,
      upgrade: (res, req, context) => {
        const response = counted(res as unknown as UwsResponse, req as unknown as UwsRequest);
        if (behavior.upgrade) behavior.upgrade(response, req, context);
        else response.upgrade({}, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), context);
      },
    }),
  };
}
