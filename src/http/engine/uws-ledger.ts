/**
 * Whose each open HTTP connection of the uWebSockets.js engine is, for the per-IP cap (`ConnectionGate`).
 * uWS 20.57 reports a connection's opening with its peer's address, but its closing without one (the
 * socket is gone by then) and with no handle that lasts from one to the other. The ledger follows each
 * peer's connections through what the adapter sees instead:
 *
 * - A connection waits for a request from its opening, and again after each response (keep-alive);
 *   uWS closes one that waits longer than `waitMs`, so a waiting entry is kept until then and no longer.
 * - A request takes one of its peer's waiting entries; its response's end gives the entry back (or,
 *   when the connection closes after it, ends it); a close during the request is the request's abort,
 *   which uWS reports right after the close: that close is the request's.
 * - A close nobody claims (a waiting connection ended by its peer or by uWS) is its peer's when only
 *   one peer had waiting connections when it came; otherwise an entry ends at its deadline.
 *
 * So a peer's count is never below its true one, and above it only until a deadline passes.
 * `gate.close` is called once for every connection `gate.open` admitted.
 */
import type { ConnectionGate } from './types.ts';

/** A request in flight, from `requestStarted` to its end, abort or upgrade. */
export interface LedgerToken {
  address: string;
  /** Its connection is counted by the ledger (false when the peer had no waiting entry left). */
  counted: boolean;
  /** Its connection was given back to the gate (closed or upgraded). */
  done: boolean;
}

export interface LedgerOptions {
  gate: Pick<ConnectionGate, 'open' | 'close'>;
  /** How long uWS lets a connection wait for a request, at the latest (its timeout plus its timer's granularity). */
  waitMs: number;
  now: () => number;
  /** Runs `fn` once the current I/O callbacks are done (default `setImmediate`). */
  later?: (fn: () => void) => void;
}

export class ConnectionLedger {
  /** Per peer, the deadlines of its waiting connections, earliest first. */
  private readonly waiting = new Map<string, number[]>();
  /**
   * Closes reported in this turn of the loop, not yet claimed by an aborted request: each with the one
   * peer that had waiting connections when it came (none when several had).
   */
  private readonly unclaimed: Array<string | undefined> = [];
  /** Closes to come (or come already) of connections the ledger ended itself: a response that closes its connection. */
  private expected = 0;
  /** Closes of waiting connections whose peer could not be told: each one ends a waiting entry at its deadline. */
  private unknown = 0;
  private settling = false;
  private lastSweep = 0;

  constructor(private readonly options: LedgerOptions) {}

  /** A connection opened from `address`: false refuses it (the adapter closes it, and reports no close for it). */
  opened(address: string): boolean {
    this.sweep();
    if (!this.options.gate.open(address)) return false;
    this.push(address);
    return true;
  }

  /** A connection `opened` refused will close later (answered first): its close is not a counted one's. */
  refusedClosing(): void {
    this.expected++;
  }

  /** A connection closed (uWS does not say whose). */
  closed(): void {
    this.unclaimed.push(this.waiting.size === 1 ? this.waiting.keys().next().value : undefined);
    if (this.settling) return;
    this.settling = true;
    (this.options.later ?? setImmediate)(() => this.settle());
  }

  /** A request arrived from `address`: on one of its waiting connections. */
  requestStarted(address: string): LedgerToken {
    const deadlines = this.waiting.get(address);
    const counted = deadlines !== undefined && deadlines.length > 0;
    if (counted) this.take(address, deadlines);
    return { address, counted, done: false };
  }

  /** The request's connection closed before its response ended (uWS's abort, which follows the close at once). */
  requestAborted(token: LedgerToken): void {
    this.unclaimed.pop();
    this.release(token);
  }

  /** The request's response ended: its connection waits for the next request, or closes now (`closing`). */
  requestEnded(token: LedgerToken, closing: boolean): void {
    if (token.done || !token.counted) return;
    if (!closing) return this.push(token.address);
    this.expected++;
    this.release(token);
  }

  /** The request's connection became a WebSocket: it leaves the HTTP count (uWS reports no close for it). */
  upgraded(token: LedgerToken): void {
    this.release(token);
  }

  private settle(): void {
    this.settling = false;
    this.sweep();
    for (const only of this.unclaimed.splice(0)) {
      if (this.expected > 0) this.expected--;
      else this.waitingClosed(only);
    }
  }

  /** A waiting connection closed: the peer's that was the only one with waiting connections then, if any. */
  private waitingClosed(only: string | undefined): void {
    const deadlines = only === undefined ? undefined : this.waiting.get(only);
    if (!deadlines) return void this.unknown++;
    this.take(only!, deadlines);
    this.options.gate.close(only!);
  }

  /** Ends the waiting entries past their deadline: uWS has closed those connections by then. */
  private sweep(): void {
    const now = this.options.now();
    if (now - this.lastSweep < 1000) return;
    this.lastSweep = now;
    for (const [address, deadlines] of this.waiting) {
      while (deadlines.length > 0 && deadlines[0]! <= now) {
        this.take(address, deadlines);
        if (this.unknown > 0) this.unknown--;
        this.options.gate.close(address);
      }
    }
  }

  private push(address: string): void {
    const deadline = this.options.now() + this.options.waitMs;
    const deadlines = this.waiting.get(address);
    if (deadlines) deadlines.push(deadline);
    else this.waiting.set(address, [deadline]);
  }

  /** Removes the earliest entry: whichever connection it was, the later deadlines stay (never below the true count). */
  private take(address: string, deadlines: number[]): void {
    deadlines.shift();
    if (deadlines.length === 0) this.waiting.delete(address);
  }

  private release(token: LedgerToken): void {
    if (token.done || !token.counted) return;
    token.done = true;
    this.options.gate.close(token.address);
  }
}
