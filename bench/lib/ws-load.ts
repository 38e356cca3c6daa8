/**
 * WebSocket load: many `ws` clients in the bench process. Frames are classified without a
 * JSON parse (`{"event":"<name>",...` is how the gateway serializes every frame), so the load
 * generator spends as little as possible of the CPU it shares with the service.
 */
import WebSocket from 'ws';

/** The `event` of a frame `{"event":"NAME",...}`, read from the bytes. */
export function eventOf(buf: Buffer): string {
  const end = buf.indexOf(34, 10);
  return end < 0 ? '' : buf.toString('latin1', 10, end);
}

/**
 * The simulator's filler pieces (` word`, tools/simulator/render.ts) in a chunk frame: its spaces, as no other
 * part of the frame has one.
 */
export function fillerPieces(buf: Buffer): number {
  let n = 0;
  for (let at = buf.indexOf(32); at >= 0; at = buf.indexOf(32, at + 1)) n++;
  return n;
}

export interface OpenOptions {
  /** Connections being opened at once. */
  concurrency?: number;
  /** Spread source addresses over 127.0.0.1..127.0.0.N (per-IP limits, ephemeral ports). */
  sourceAddresses?: number;
  onMessage?: (index: number, data: Buffer) => void;
}

/** Opens `n` connections to `url`; rejects on the first refused upgrade or error. */
export async function openSockets(url: string, n: number, opts: OpenOptions = {}): Promise<WebSocket[]> {
  const sockets: WebSocket[] = new Array<WebSocket>(n);
  const concurrency = opts.concurrency ?? 200;
  let next = 0;
  const openOne = (i: number) =>
    new Promise<void>((res, rej) => {
      const localAddress = opts.sourceAddresses ? `127.0.0.${1 + (i % opts.sourceAddresses)}` : undefined;
      const ws = new WebSocket(url, { perMessageDeflate: false, ...(localAddress && { localAddress }) });
      sockets[i] = ws;
      const onMessage = opts.onMessage;
      if (onMessage) ws.on('message', (data: Buffer) => onMessage(i, data));
      ws.once('open', () => res());
      ws.once('error', rej);
      ws.once('unexpected-response', (_req, r) => rej(new Error(`upgrade refused: HTTP ${r.statusCode}`)));
    });
  const lanes = Array.from({ length: Math.min(concurrency, n) }, async () => {
    while (next < n) await openOne(next++);
  });
  await Promise.all(lanes);
  return sockets;
}

/** Closes every socket and waits (bounded) until they are all closed. */
export async function closeSockets(sockets: WebSocket[], timeoutMs = 10_000): Promise<void> {
  const pending = sockets.filter((ws) => ws.readyState !== WebSocket.CLOSED);
  const all = Promise.all(
    pending.map(
      (ws) =>
        new Promise<void>((res) => {
          ws.once('close', () => res());
          ws.close();
        }),
    ),
  );
  const timer = new Promise<void>((res) => setTimeout(res, timeoutMs).unref());
  await Promise.race([all, timer]);
  for (const ws of pending) if (ws.readyState !== WebSocket.CLOSED) ws.terminate();
}
