import WebSocket from 'ws';
import { PATIENT } from './wait.ts';

export interface Frame {
  event: string;
  data: Record<string, any>;
}

/** A test WebSocket client that records every frame and can wait for one that matches. */
export interface WsClient {
  ws: WebSocket;
  frames: Frame[];
  send(msg: unknown): void;
  sendRaw(text: string): void;
  /** Resolves with the first frame (recorded or future) after index `from` that matches. */
  next(match: (f: Frame) => boolean, timeoutMs?: number, from?: number): Promise<Frame>;
  /** Resolves once the socket closes, with its code. */
  closed: Promise<number>;
  /** Resolves once the socket closes, with its code and reason. */
  closing: Promise<{ code: number; reason: string }>;
  close(): void;
}

export async function connectWs(url: string, options: WebSocket.ClientOptions = {}): Promise<WsClient> {
  const ws = new WebSocket(url, options);
  const frames: Frame[] = [];
  const waiters = new Set<() => void>();
  ws.on('message', (data: Buffer) => {
    frames.push(JSON.parse(data.toString('utf8')) as Frame);
    for (const w of waiters) w();
  });
  const closing = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const closed = closing.then((c) => c.code);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
  return {
    ws,
    frames,
    closed,
    closing,
    send: (msg) => ws.send(JSON.stringify(msg)),
    sendRaw: (text) => ws.send(text),
    next(match, timeoutMs = PATIENT.timeout, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = frames.slice(from).find(match);
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          const errors = frames
            .slice(from)
            .filter((f) => f.event === 'error')
            .map((f) => f.data);
          reject(
            new Error(
              `no matching frame within ${timeoutMs} ms; got ${JSON.stringify(frames.slice(from).map((f) => f.event))}${errors.length ? `; errors: ${JSON.stringify(errors)}` : ''}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => ws.close(),
  };
}
