// @ts-check
// The pages' one connection to agentd: the WebSocket URL, the API key, reconnecting with capped,
// jittered backoff, and — for the API socket — resuming every subscribed session after the last
// `seq` the page has seen (`{type: "subscribe", sessionId, since}` replays the stored events after
// it, then goes live), so a reconnect, agentd's restart included, continues where it stopped.
// Resuming waits for the connection's first frame, `hello`: seqs resume only under the `storeId` they
// were seen under; under another one (a restart with `storage: memory`) every session replays from 0.
// Served beside each page's own files (/console/live.js, /inspect/live.js).
import { backoffDelay } from './backoff.js';

const KEY = 'agentd.apiKey';

/** The API key: kept in this tab only (sessionStorage), entered in the console when agentd asks for one. */
export const apiKey = {
  get: () => sessionStorage.getItem(KEY) ?? '',
  /** @param {string} key */
  set: (key) => sessionStorage.setItem(KEY, key),
};

/**
 * The WebSocket URL of `path` on this origin, with the key as `?token=` (browsers cannot set headers on an upgrade).
 * @param {string} path
 */
export function wsUrl(path) {
  const url = new URL(path, location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const key = apiKey.get();
  if (key) url.searchParams.set('token', key);
  return url;
}

/**
 * @typedef {'connecting' | 'open' | 'closed'} LinkState
 * @typedef {object} LiveOptions
 * @property {string} path  `/` (the API) or `/inspect/ws`
 * @property {(message: unknown) => void} onMessage  each parsed frame
 * @property {(state: LinkState) => void} [onState]
 * @property {(sessionId: string) => number | undefined} [lastSeq]  the last `seq` seen of a session (undefined: nothing yet, replay all)
 * @typedef {object} Live
 * @property {(frame: object) => boolean} send  false when not connected (nothing sent)
 * @property {(sessionId: string) => void} subscribe  watch a session: its whole history now (once connected), then after every reconnect what came
 *   after `lastSeq` (all of it again when the connection's `hello` names another store)
 * @property {() => void} reconnect  at once (e.g. with a new key)
 * @property {() => void} close  for good
 */

/**
 * Keeps one WebSocket open to `path`.
 * @param {LiveOptions} options
 * @returns {Live}
 */
export function live({ path, onMessage, onState = () => {}, lastSeq = () => undefined }) {
  /** @type {WebSocket | undefined} */
  let ws;
  let attempt = 0;
  let closed = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  /** @type {Set<string>} */
  const sessions = new Set();
  /** Sessions whose whole history was not asked for yet. @type {Set<string>} */
  const unread = new Set();
  /** The store the seqs the page holds number (the last `hello`'s). @type {string | undefined} */
  let storeId;
  /** Whether the current socket's `hello` came: subscriptions wait for it. */
  let greeted = false;

  /** @param {object} frame */
  const send = (frame) => {
    if (ws?.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(frame));
    return true;
  };
  /** @param {string} sessionId */
  const subscribe = (sessionId) => {
    if (!greeted) return; // sent once `hello` comes
    const since = unread.has(sessionId) ? 0 : (lastSeq(sessionId) ?? 0);
    if (send({ type: 'subscribe', sessionId, since })) unread.delete(sessionId);
  };

  const open = () => {
    timer = undefined;
    onState('connecting');
    const socket = new WebSocket(wsUrl(path));
    ws = socket;
    greeted = false;
    socket.onopen = () => {
      attempt = 0;
      onState('open');
    };
    socket.onmessage = (m) => {
      if (ws !== socket) return; // a socket given up for a newer one
      let message;
      try {
        message = JSON.parse(String(m.data));
      } catch {
        return;
      }
      onMessage(message);
      const hello = /** @type {{ event?: unknown, data?: { storeId?: unknown } } | null} */ (message);
      const told = hello?.event === 'hello' || hello?.event === 'storeChanged';
      if (!told || typeof hello.data?.storeId !== 'string') return;
      // Another store (a `hello` naming another, or `storeChanged`: the store lost data): the seqs held number logs
      // that are gone, so every session is read whole again.
      if (storeId !== undefined && storeId !== hello.data.storeId) for (const id of sessions) unread.add(id);
      storeId = hello.data.storeId;
      greeted = true;
      // Each watched session from the last `seq` the page holds (after a reconnect), or whole.
      for (const id of sessions) subscribe(id);
    };
    socket.onclose = () => {
      if (ws !== socket) return;
      ws = undefined;
      onState('closed');
      if (!closed) timer = setTimeout(open, backoffDelay(attempt++));
    };
  };
  open();

  return {
    send,
    subscribe(sessionId) {
      if (sessions.has(sessionId)) return;
      sessions.add(sessionId);
      // The first time, its whole history: frames of it that came before (a connection always
      // receives `default`'s) may not be all of it.
      unread.add(sessionId);
      subscribe(sessionId);
    },
    reconnect() {
      if (closed) return;
      clearTimeout(timer);
      attempt = 0;
      const old = ws;
      ws = undefined;
      old?.close();
      open();
    },
    close() {
      closed = true;
      clearTimeout(timer);
      ws?.close();
    },
  };
}
