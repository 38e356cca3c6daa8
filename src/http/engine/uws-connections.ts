/**
 * The per-IP connection cap on uWebSockets.js: `app.filter` tells each connection's opening (with its
 * peer) and closing (without), and the ledger (uws-ledger.ts) attributes the closings from what the
 * requests show (`RequestHooks`). A connection the gate refuses is answered at once with the gate's refusal
 * (429; uWS gives no way to wait for its first request: the answer goes first, its request is read and dropped)
 * and closed; when uWS cannot write to it, it is closed unanswered.
 */
import type { HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { STATUS_CODES } from 'node:http';
import { formatIp } from './address.ts';
import type { ConnectionGate } from './types.ts';
import type { RequestHooks } from './uws-http.ts';
import { ConnectionLedger } from './uws-ledger.ts';

/** uWS's timers tick every 4 s: a timeout of n seconds fires within n + 4. */
const TIMER_SLACK_MS = 5_000;
/** How long a connection may wait for a request (its first, or the next after a response). */
const WAIT_S = 10;

interface Timeouts {
  setIdleTimeout?(seconds: number): void;
  setResponseTimeout?(seconds: number): void;
}

/** Answers a refused connection and closes it (`end` with closeConnection); closes it unanswered if that fails. */
function refuse(res: HttpResponse, answer: ReturnType<ConnectionGate['refusal']>): void {
  try {
    res.cork(() => {
      res.writeStatus(`${answer.status} ${STATUS_CODES[answer.status] ?? ''}`.trim());
      for (const name in answer.headers) res.writeHeader(name, answer.headers[name]!);
      res.end(answer.body, true);
    });
  } catch {
    res.close();
  }
}

/** Counts `app`'s HTTP connections through `gate`; gives the hooks that tell the ledger how each request ends. */
export function countConnections(app: TemplatedApp, gate: ConnectionGate): (address: string) => RequestHooks {
  const timeouts = app as unknown as Timeouts;
  // This package's uWS lets a connection wait 30 s by default; 10 s is upstream's, and the node engine's keep-alive.
  timeouts.setIdleTimeout?.(WAIT_S);
  timeouts.setResponseTimeout?.(WAIT_S);
  const ledger = new ConnectionLedger({ gate, waitMs: WAIT_S * 1000 + TIMER_SLACK_MS, now: Date.now });
  let refusing = false;
  let refusedClosed = false;
  app.filter((res, count) => {
    if (count !== 1) {
      if (refusing) refusedClosed = true;
      else ledger.closed();
      return;
    }
    const address = formatIp(res.getRemoteAddress());
    if (ledger.opened(address)) return;
    refusing = true; // a close reported inside refuse(): not one the ledger counted
    refusedClosed = false;
    try {
      refuse(res, gate.refusal(address));
    } finally {
      refusing = false;
    }
    if (!refusedClosed) ledger.refusedClosing(); // its close comes later: not one the ledger counted either
  });
  return (address) => {
    const token = ledger.requestStarted(address);
    return {
      ended: (closing) => ledger.requestEnded(token, closing),
      aborted: () => ledger.requestAborted(token),
      upgraded: () => ledger.upgraded(token),
    };
  };
}
