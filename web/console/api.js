// The console's only way to the service: REST with the API key (when one is needed) and one
// WebSocket. The key lives in sessionStorage, never in the page.
const KEY = 'agentd.apiKey';

export const apiKey = {
  get: () => sessionStorage.getItem(KEY) ?? '',
  set: (key) => sessionStorage.setItem(KEY, key),
};

/** An error answer of the service, with its envelope's code. */
export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = error?.code ?? 'INTERNAL_ERROR';
  }
}

/** Calls a REST route; resolves with the JSON body, rejects with ApiError. */
export async function call(method, path, body) {
  const headers = {};
  if (apiKey.get()) headers.Authorization = `Bearer ${apiKey.get()}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, json.error);
  return json;
}

/**
 * Keeps one WebSocket open (reconnecting after 1 s, doubling up to 30 s while it fails) and hands
 * every event to `onEvent`.
 * `onOpen` runs after every (re)connect, so subscriptions can be renewed.
 */
export function connectEvents({ onEvent, onOpen, onClose }) {
  let ws;
  let delay = 1000;
  const open = () => {
    const url = new URL('/', location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    if (apiKey.get()) url.searchParams.set('token', apiKey.get());
    ws = new WebSocket(url);
    ws.onopen = () => {
      delay = 1000;
      onOpen();
    };
    ws.onmessage = (m) => {
      const { event, data } = JSON.parse(m.data);
      onEvent(event, data);
    };
    ws.onclose = () => {
      onClose();
      setTimeout(open, delay);
      delay = Math.min(Math.max(delay * 2, 1000), 30_000);
    };
  };
  open();
  return { send: (frame) => ws.readyState === WebSocket.OPEN && (ws.send(JSON.stringify(frame)), true), reconnect: () => ((delay = 0), ws.close()) };
}
