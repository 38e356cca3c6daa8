/**
 * One WebSocket connection to agentd's `/`, as a pull queue of parsed frames: the global WebSocket (browsers, Node
 * 22+), else the `ws` package (Node 20), loaded only then. A frame that is not JSON is skipped; the connection's end
 * (close or error) ends the queue with its close code.
 */
import { AgentdError } from './errors.ts';
import type { WebSocketLike } from './options.ts';

export interface RawFrame {
  event: string;
  data: Record<string, unknown>;
}

export interface FrameSocket {
  /** The next frame; `undefined` once the connection ended (see `closeCode`). */
  next(): Promise<RawFrame | undefined>;
  send(frame: object): void;
  close(): void;
  readonly closeCode: number | undefined;
}

const WS_PACKAGE = 'ws'; // a name, not a literal import: a bundler for the browser leaves it alone

async function constructor(given: WebSocketLike | undefined): Promise<WebSocketLike> {
  if (given) return given;
  const global = (globalThis as { WebSocket?: WebSocketLike }).WebSocket;
  if (global) return global;
  try {
    const mod = (await import(WS_PACKAGE)) as { WebSocket?: WebSocketLike; default?: WebSocketLike };
    const found = mod.WebSocket ?? mod.default;
    if (found) return found;
  } catch {
    // reported below
  }
  throw new AgentdError(
    0,
    'CLIENT_INPUT',
    'No WebSocket here: use Node 22+, install the `ws` package, or pass options.WebSocket',
  );
}

/** The WebSocket URL of `baseUrl` with `token` as `?token=` (browsers cannot send an Authorization header). */
export function socketUrl(baseUrl: string, token: string | undefined): string {
  const url = new URL(`${baseUrl}/`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  if (token !== undefined) url.searchParams.set('token', token);
  return url.href;
}

/** Opens a connection; rejects (NETWORK_ERROR) when it never opens. */
export async function openSocket(url: string, given: WebSocketLike | undefined): Promise<FrameSocket> {
  const Ctor = await constructor(given);
  const ws = new Ctor(url);
  const queue: RawFrame[] = [];
  const waiting: ((frame: RawFrame | undefined) => void)[] = [];
  let ended = false;
  let closeCode: number | undefined;
  const end = (code: number) => {
    if (ended) return;
    ended = true;
    closeCode = code;
    for (const wake of waiting.splice(0)) wake(undefined);
  };
  ws.addEventListener('message', (e) => {
    let frame: RawFrame;
    try {
      frame = JSON.parse(String(e.data)) as RawFrame;
    } catch {
      return;
    }
    if (typeof frame !== 'object' || frame === null || typeof frame.event !== 'string') return;
    const wake = waiting.shift();
    if (wake) wake(frame);
    else queue.push(frame);
  });
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve(), { once: true });
    ws.addEventListener('error', () => reject(new AgentdError(0, 'NETWORK_ERROR', `WebSocket ${url} failed`)), {
      once: true,
    });
    ws.addEventListener('close', (e) => {
      end(e.code);
      reject(new AgentdError(0, 'NETWORK_ERROR', `WebSocket closed (${e.code}) before it opened`));
    });
  });
  ws.addEventListener('error', () => end(1006));
  return {
    next: () =>
      queue.length > 0
        ? Promise.resolve(queue.shift())
        : ended
          ? Promise.resolve(undefined)
          : new Promise((resolve) => waiting.push(resolve)),
    send: (frame) => ws.send(JSON.stringify(frame)),
    close: () => {
      end(1000);
      ws.close(1000);
    },
    get closeCode() {
      return closeCode;
    },
  };
}
