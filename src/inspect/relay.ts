import type { WebSocket } from 'undici';
import { backoffDelay } from '../backoff.ts';
import type { Logger } from '../log/index.ts';
import type { InspectHub } from './hub.ts';

const BEHIND_BYTES = 1024 * 1024;
const RETRY = { baseMs: 1000, maxMs: 30_000, jitterDown: 0.2, jitterUp: 0 };

/**
 * `--inspect-relay`: pushes the inspection stream to an external inspector server as one more viewer of the hub,
 * attached while its socket is open; reconnects with backoff (1 s doubling to 30 s). Over 1 MiB buffered, frames
 * stop until it drains below half, then a resync.
 */
export function startRelay(hub: InspectHub, url: string, log: Logger): { close(): void } {
  let closed = false;
  let attempt = 0;
  let socket: WebSocket | undefined;
  let timer: NodeJS.Timeout | undefined;

  // undici loads with the relay (`--inspect-relay`), not at every start.
  let Client: typeof WebSocket | undefined;
  const open = (): void => {
    if (!Client)
      return void import('undici').then((undici) => {
        Client = undici.WebSocket;
        if (!closed) open();
      });
    const ws = new Client(url);
    socket = ws;
    let handle: ReturnType<InspectHub['attach']> | undefined;
    let poll: NodeJS.Timeout | undefined;
    ws.addEventListener('open', () => {
      attempt = 0;
      log.info({ url }, 'inspector relay connected');
      handle = hub.attach({ send: (frame) => (ws.send(frame), ws.bufferedAmount < BEHIND_BYTES) });
      poll = setInterval(() => ws.bufferedAmount < BEHIND_BYTES / 2 && handle?.drained(), 1000);
      poll.unref();
    });
    ws.addEventListener('close', () => {
      handle?.detach();
      clearInterval(poll);
      if (closed) return;
      const delay = backoffDelay(attempt++, RETRY, Math.random);
      log.warn({ url, retryInMs: delay }, 'inspector relay disconnected');
      timer = setTimeout(open, delay);
      timer.unref();
    });
    ws.addEventListener('error', () => undefined); // followed by close
  };
  open();

  return {
    close(): void {
      closed = true;
      clearTimeout(timer);
      socket?.close();
    },
  };
}
