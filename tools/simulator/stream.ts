/**
 * Writes precomputed answers with the requested timing. One timer per stream at most, never one
 * per piece: when pacing, every piece already due is batched into one write, and writes are at
 * least MIN_TICK_MS apart. Each pending answer registers a cancel function in `active` so the
 * simulator can end them all on close; a client that goes away ends its stream's timer.
 */
import type { ServerResponse } from 'node:http';
import type { StreamFrames } from './render.ts';

/** Pieces due within this many ms of each other go out in one write. */
const MIN_TICK_MS = 4;

export interface Pacing {
  ttftMs: number;
  /** 0 = no pacing: everything after the first-piece delay goes out at once. */
  tokensPerSec: number;
  stall?: { ms: number; afterTokens?: number };
  disconnect?: { afterTokens?: number };
  /** End the answer cleanly after `afterTokens` pieces (default: all), its tail left out. */
  truncate?: { afterTokens?: number };
}

export type ActiveSet = Set<() => void>;

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
};

function stopIndex(count: number, after: number | undefined, fallback: number): number {
  return Math.max(0, Math.min(count, after ?? fallback));
}

/** Streams `frames` on `res` (headers at once, then pieces paced by `pacing`). */
export function pumpStream(res: ServerResponse, frames: StreamFrames, pacing: Pacing, active: ActiveSet): void {
  const { head, pieces, tail } = frames;
  const count = pieces.length;
  const stallAt = pacing.stall ? stopIndex(count, pacing.stall.afterTokens, Math.max(1, count >> 1)) : -1;
  const cutAt = pacing.disconnect ? stopIndex(count, pacing.disconnect.afterTokens, count >> 1) : -1;
  const endAt = pacing.truncate ? stopIndex(count, pacing.truncate.afterTokens, count) : -1;
  const msPerPiece = pacing.tokensPerSec > 0 ? 1000 / pacing.tokensPerSec : 0;
  let sent = 0;
  let headSent = false;
  let stalled = false;
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  let origin = performance.now() + pacing.ttftMs;

  const finish = (): void => {
    done = true;
    if (timer) clearTimeout(timer);
    active.delete(cancel);
  };
  const cancel = (): void => {
    if (done) return;
    finish();
    res.destroy();
  };
  const step = (): void => {
    timer = undefined;
    if (done) return;
    let end =
      msPerPiece > 0
        ? Math.max(sent, Math.min(count, Math.floor((performance.now() - origin) / msPerPiece) + 1))
        : count;
    if (!stalled && stallAt >= 0 && end > stallAt) end = stallAt;
    if (cutAt >= 0 && end > cutAt) end = cutAt;
    if (endAt >= 0 && end > endAt) end = endAt;
    let out = headSent ? '' : head;
    headSent = true;
    for (let i = sent; i < end; i++) out += pieces[i]!;
    sent = end;
    if (sent === cutAt) {
      finish();
      res.write(out, () => res.destroy());
      return;
    }
    if (sent === stallAt && !stalled) {
      stalled = true;
      if (out) res.write(out);
      origin += pacing.stall!.ms;
      timer = setTimeout(step, pacing.stall!.ms);
      return;
    }
    if (sent === endAt) {
      finish();
      res.end(out);
      return;
    }
    if (sent === count) {
      finish();
      res.end(out + tail);
      return;
    }
    if (out) res.write(out);
    timer = setTimeout(step, Math.max(MIN_TICK_MS, origin + sent * msPerPiece - performance.now()));
  };

  active.add(cancel);
  res.on('close', finish);
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();
  if (pacing.ttftMs > 0) timer = setTimeout(step, pacing.ttftMs);
  else step();
}

/** Runs `send` after `ms` (at once when 0), unless the client goes away or the simulator closes. */
export function afterDelay(res: ServerResponse, ms: number, active: ActiveSet, send: () => void): void {
  if (ms <= 0) {
    send();
    return;
  }
  const cancel = (): void => {
    clearTimeout(timer);
    active.delete(cancel);
    res.destroy();
  };
  const timer = setTimeout(() => {
    active.delete(cancel);
    send();
  }, ms);
  active.add(cancel);
  res.on('close', () => {
    clearTimeout(timer);
    active.delete(cancel);
  });
}
