/**
 * A WebSocket client of the chaos run that follows a few sessions the way a careful client does: it subscribes to
 * each (first `since: 0`), remembers the last durable `seq` it saw per session, and whenever its connection ends
 * (its instance killed, a drop the load asks for, a ping unanswered for `STALL_MS` while its instance is paused, an
 * `error` frame refusing one of its frames, such as a `subscribe` whose replay failed) it connects to an instance that
 * is up (`pick`) and subscribes again with `since` that seq. It records every frame with a
 * `seq` of its sessions (the checker's WsView) with the store identity it was told, sends `message` frames, and hands
 * each frame to `onFrame` (the approval bot, the load's acknowledgements).
 * A store identity unlike the one it knew (a `hello` frame's `storeId`, or a `storeChanged` frame) is noted (`stores`);
 * the client then drops every seq it holds, as a careful client does: it leaves that connection (recording nothing
 * more of it) and subscribes again elsewhere with `since: 0`.
 */
import WebSocket from 'ws';
import type { Frame, StoreSeen, WsView } from './recorded.ts';
import { lifecycle } from './cleanup.ts';
import { journal } from './journal.ts';

const STALL_MS = 3000;
/** Frames that are not stored: they repeat the seq of the last durable one. */
const TRANSIENT = new Set(['thinking', 'chunk', 'toolProgress', 'hello', 'pong']);

export interface Follower {
  readonly name: string;
  readonly sessions: readonly string[];
  /** Sends a `message` frame; false when not connected. */
  send(sessionId: string, content: string): boolean;
  /** Ends the connection (it reconnects elsewhere and resumes). */
  drop(): void;
  /** The last durable seq seen of a session. */
  lastSeq(sessionId: string): number;
  views(): WsView[];
  /** Each store identity it was told, the first included. */
  stores(): StoreSeen[];
  connections: number;
  close(): void;
}

export function createFollower(
  name: string,
  sessions: string[],
  pick: () => string | undefined,
  onFrame: (follower: Follower, frame: Frame) => void,
): Follower {
  const last = new Map(sessions.map((s) => [s, 0]));
  const seen = new Map(sessions.map((s) => [s, [] as WsView['frames']]));
  let socket: WebSocket | undefined;
  let closed = false;
  let storeId: string | undefined;
  const stores: StoreSeen[] = [];
  /** A connection left for a new store identity: its later frames are not recorded. */
  const left = new WeakSet<WebSocket>();
  let pongAt = Date.now();
  const ping = setInterval(() => {
    if (!socket || socket.readyState !== WebSocket.OPEN) return;
    if (Date.now() - pongAt > STALL_MS) {
      journal(`${name}: no frame for ${STALL_MS} ms, reconnecting`);
      socket.terminate();
    } else socket.send(JSON.stringify({ type: 'ping' }));
  }, 1000);

  const connect = (): void => {
    if (closed || lifecycle.ended) return;
    const url = pick();
    if (url === undefined) {
      setTimeout(connect, 300);
      return;
    }
    follower.connections++;
    journal(`${name} connects to ${url}, since ${sessions.map((s) => `${s}:${last.get(s)}`).join(' ')}`);
    const ws = new WebSocket(url, { handshakeTimeout: 3000 });
    socket = ws;
    pongAt = Date.now();
    ws.on('open', () => {
      for (const sessionId of sessions)
        ws.send(JSON.stringify({ type: 'subscribe', sessionId, since: last.get(sessionId) }));
    });
    ws.on('message', (raw: Buffer) => {
      if (!left.has(ws)) receive(ws, raw.toString());
    });
    ws.on('error', () => undefined);
    ws.on('close', (code) => {
      journal(`${name} connection to ${url} closed (${code})`);
      if (socket === ws) socket = undefined;
      setTimeout(connect, 100);
    });
  };

  /** A store identity told on `ws`: noted; a new one (not the first) drops every seq held and leaves `ws`. */
  const toldStore = (ws: WebSocket, told: string, via: StoreSeen['via']): void => {
    if (told === storeId) return;
    stores.push({ client: name, at: Date.now(), storeId: told, via });
    const known = storeId !== undefined;
    storeId = told;
    if (!known) return;
    journal(`${name}: store ${told} (${via}); dropping every seq held, resuming from 0`);
    for (const s of sessions) last.set(s, 0);
    left.add(ws);
    ws.terminate();
  };

  const receive = (ws: WebSocket, text: string): void => {
    pongAt = Date.now();
    let frame: Frame;
    try {
      frame = JSON.parse(text) as Frame;
    } catch {
      return;
    }
    const told = frame.data?.['storeId'];
    if ((frame.event === 'hello' || frame.event === 'storeChanged') && typeof told === 'string') {
      toldStore(ws, told, frame.event);
      if (left.has(ws)) return;
    }
    const sessionId = frame.data?.['sessionId'];
    const seq = frame.data?.seq;
    if (frame.event === 'error' && frame.data.turnId === undefined && seen.has(String(sessionId))) {
      // A frame of ours refused (a `subscribe` whose replay failed while Redis was away): resume once more, soon.
      journal(`${name}: error for ${String(sessionId)} (${String(frame.data['code'])}), resuming`);
      const refused = socket;
      setTimeout(() => refused?.terminate(), 500);
    }
    if (typeof sessionId === 'string' && typeof seq === 'number' && seen.has(sessionId)) {
      const turnId = frame.data['turnId'];
      seen.get(sessionId)!.push({
        event: frame.event,
        seq,
        ...(typeof turnId === 'string' && { turnId }),
        ...(storeId !== undefined && { storeId }),
      });
      const durable = !TRANSIENT.has(frame.event) && !(frame.event === 'error' && frame.data.turnId === undefined);
      if (durable && seq > last.get(sessionId)!) last.set(sessionId, seq);
    }
    onFrame(follower, frame);
  };

  const follower: Follower = {
    name,
    sessions,
    connections: 0,
    send: (sessionId, content) => {
      if (!socket || socket.readyState !== WebSocket.OPEN) return false;
      socket.send(JSON.stringify({ type: 'message', sessionId, content }));
      return true;
    },
    drop: () => {
      journal(`${name} drops its connection`);
      socket?.terminate();
    },
    lastSeq: (sessionId) => last.get(sessionId) ?? 0,
    stores: () => [...stores],
    views: () => sessions.map((sessionId) => ({ client: name, sessionId, from: 0, frames: [...seen.get(sessionId)!] })),
    close: () => {
      closed = true;
      clearInterval(ping);
      socket?.terminate();
    },
  };
  connect();
  return follower;
}
