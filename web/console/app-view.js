// @ts-check
// The console as an MCP Apps host (docs/console.md, "MCP Apps"): a tool result whose `app` has an `href` shows the app
// in the transcript. Contracts:
// - Double frame, as the specification asks of web hosts: the console frames the sandbox proxy
//   (`/console/apps/sandbox?csp=…`, sandbox `allow-scripts allow-forms`: an opaque origin, under the app's CSP), which
//   frames the app's html. The console reads the html itself (`GET app.href`, with its key) and hands it over in
//   `ui/notifications/sandbox-resource-ready`: no URL the app sees carries the key, and the app can reach neither the
//   console's document nor its storage nor agentd (its CSP allows no connection unless the resource declared one).
// - The JSON-RPC bridge is ext-apps' AppBridge over a PostMessageTransport bound to that one frame, loaded on the first
//   app (`/console/app-bridge.js`). After `ui/initialize` the app gets the call's arguments (`tool-input`) and its
//   result (`tool-result`; a failed call: `tool-cancelled`), and the host context (theme, inline display, width).
// - `tools/call` → `POST {href}/calls` `{name, arguments}`; its `result` is the answer, an HTTP error a JSON-RPC error.
//   `ui/message` → a user message of the session (the composer's path); `ui/open-link` opens http(s) links in a new
//   tab; `ui/notifications/size-changed` sets the frame's height within MIN_HEIGHT..MAX_HEIGHT; logging goes to the
//   browser's console. A handler that throws answers a JSON-RPC error; a request the bridge cannot parse (JSON-RPC 2.0
//   with an id) is answered `-32600` here. Nothing an app sends throws into the console.
// - An app's frame leaves with its entry: `sweepApps` (after each render) closes the bridges of frames no longer in the
//   page; `teardownApps` (the transcript cleared, another session shown) first sends each `ui/resource-teardown`.
import { call, getText } from './api.js';
import { el } from './dom.js';

/** @typedef {import('./transcript.js').AppMarker} AppMarker */
/** @typedef {Extract<AppMarker, { href: string }>} ShownApp  an app to show (the other marker is a note) */
/** @typedef {import('./app-bridge.js').AppBridge} AppBridge */
/**
 * What an app is shown for: its call (`args`), the call's outcome, and where its html is.
 * @typedef {{ callId: string, toolName: string, args: unknown, success: boolean, result: unknown, app: ShownApp }} AppCall
 * @typedef {{ message: (text: string) => boolean }} AppHost  sends a user message to the shown session; false when it could not
 */

export const MIN_HEIGHT = 40;
export const MAX_HEIGHT = 640;
const FIRST_HEIGHT = 160;
const HOST_INFO = { name: 'agentd console', version: '1' };
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;

/** @type {Promise<typeof import('./app-bridge.js')> | undefined} */
let bridgeModule;
/** @type {Set<{ box: HTMLElement, close: (teardown: boolean) => void }>} */
const views = new Set();

/** Whether a marker names an app to show. @param {AppMarker | undefined} app @returns {app is ShownApp} */
export const showsApp = (app) => !!app && 'href' in app;

/** The sandbox proxy's address for an app's CSP. @param {ShownApp} app */
const sandboxUrl = (app) =>
  `/console/apps/sandbox${app.ui?.csp ? `?csp=${encodeURIComponent(JSON.stringify(app.ui.csp))}` : ''}`;

/** Text content of a `ui/message`. @param {unknown} content */
const textOf = (content) =>
  (Array.isArray(content) ? content : [content])
    .flatMap((/** @type {any} */ c) => (c?.type === 'text' && typeof c.text === 'string' ? [c.text] : []))
    .join('\n')
    .trim();

/** @param {unknown} result @returns {result is { content: unknown[] }} */
const isCallToolResult = (result) =>
  typeof result === 'object' && result !== null && Array.isArray(/** @type {any} */ (result).content);

/**
 * The app of a tool call, as a transcript entry's part: a frame that loads once the box is in the page.
 * @param {AppCall} appCall
 * @param {AppHost} host
 * @returns {HTMLElement}
 */
export function appBox(appCall, host) {
  const frame = el('iframe', { title: `MCP App of ${appCall.toolName}`, className: 'app-frame' });
  frame.setAttribute('sandbox', 'allow-scripts allow-forms');
  frame.style.height = `${FIRST_HEIGHT}px`;
  const note = el('p', { className: 'app-note', hidden: true });
  const box = el('div', { className: 'app' }, frame, note);
  box.dataset.callId = appCall.callId;
  if (appCall.app.ui?.prefersBorder) box.classList.add('bordered');
  /** @param {string} text */
  const say = (text) => {
    note.textContent = text;
    note.hidden = text === '';
  };
  /** @type {AppBridge | undefined} */
  let bridge;
  let closed = false;
  /** @param {MessageEvent} event */
  const guard = (event) => {
    if (event.source !== frame.contentWindow) return;
    const d = /** @type {any} */ (event.data);
    const id = d?.id;
    if (d?.jsonrpc !== '2.0' || (typeof id !== 'string' && typeof id !== 'number')) return;
    const request = typeof d.method === 'string';
    const response = !('method' in d) && ('result' in d || 'error' in d);
    if (request || response) return;
    const error = { code: INVALID_REQUEST, message: 'Invalid Request: not a JSON-RPC request or response' };
    frame.contentWindow?.postMessage({ jsonrpc: '2.0', id, error }, '*');
  };
  const view = {
    box,
    /** @param {boolean} teardown */
    close(teardown) {
      if (closed) return;
      closed = true;
      views.delete(view);
      window.removeEventListener('message', guard);
      const b = bridge;
      if (!b) return;
      const done = () => void b.close().catch(() => {});
      if (teardown) b.teardownResource({}, { timeout: 1000 }).then(done, done);
      else done();
    },
  };
  views.add(view);
  // Started once the entry is in the page (render inserts it in the same task).
  queueMicrotask(() => {
    if (!box.isConnected) return view.close(false);
    window.addEventListener('message', guard);
    start().catch((/** @type {unknown} */ err) => say(`The app could not be shown: ${String(err)}`));
  });

  /** The html, read once (with the console's key). @type {Promise<string> | undefined} */
  let html;
  /** The frame's window the bridge talks to. @type {Window | undefined} */
  let bound;
  // A frame moved in the page (the transcript reorders its entries) is loaded afresh in a new window: the bridge
  // bound to the old one is replaced, and the proxy loaded again for the new one.
  frame.addEventListener('load', () => {
    if (!closed && bound && frame.contentWindow !== bound)
      start().catch((/** @type {unknown} */ err) => say(`The app could not be shown: ${String(err)}`));
  });

  /** Binds a bridge to the frame's window, then (re)loads the sandbox proxy in it. */
  async function start() {
    if (!html) {
      html = getText(appCall.app.href);
      html.catch(() => {}); // its failure is told when the proxy asks for it
    }
    const { AppBridge, PostMessageTransport } = await (bridgeModule ??= import('./app-bridge.js'));
    const win = frame.contentWindow;
    if (closed || !win) return;
    const b = new AppBridge(
      null,
      HOST_INFO,
      { openLinks: {}, serverTools: {}, logging: {} },
      {
        hostContext: {
          theme: matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light',
          displayMode: 'inline',
          availableDisplayModes: ['inline'],
          containerDimensions: { width: box.clientWidth || 600, maxHeight: MAX_HEIGHT },
          platform: 'web',
          locale: navigator.language,
          timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
        },
      },
    );
    void bridge?.close().catch(() => {});
    bridge = b;
    bound = win;
    wire(b, html);
    await b.connect(new PostMessageTransport(win, win));
    frame.src = sandboxUrl(appCall.app);
  }

  /** @param {AppBridge} b @param {Promise<string>} html */
  function wire(b, html) {
    b.onerror = (err) => console.warn('[MCP App]', err.message);
    b.onsandboxready = () => {
      html.then(
        (text) => b.sendSandboxResourceReady({ html: text, ...(appCall.app.ui?.csp && { csp: appCall.app.ui.csp }) }),
        (/** @type {Error} */ err) => say(`The app could not be read: ${err.message}`),
      );
    };
    b.oninitialized = () => {
      const args = /** @type {Record<string, unknown>} */ (appCall.args ?? {});
      void b.sendToolInput({ arguments: args }).catch(() => {});
      const result = appCall.result;
      if (appCall.success && isCallToolResult(result))
        void b.sendToolResult(/** @type {any} */ (result)).catch(() => {});
      else void b.sendToolCancelled({ reason: 'the tool call failed' }).catch(() => {});
    };
    b.oncalltool = async ({ name, arguments: args }) => {
      if (typeof name !== 'string' || name === '')
        throw Object.assign(new Error('tools/call needs the name of a tool'), { code: INVALID_PARAMS });
      say(`Calling ${name}… (a call that needs approval waits for it at the end of the transcript)`);
      try {
        /** @type {{ result: import('@modelcontextprotocol/client').CallToolResult }} */
        const answer = await call('POST', `${appCall.app.href}/calls`, { name, ...(args && { arguments: args }) });
        return answer.result;
      } finally {
        say('');
      }
    };
    b.onmessage = async ({ content }) => {
      const text = textOf(content);
      if (!text) throw new Error('ui/message carries no text');
      return host.message(text) ? {} : { isError: true };
    };
    b.onopenlink = async ({ url }) => {
      if (!/^https?:\/\//i.test(url)) throw new Error('only http(s) links open');
      window.open(url, '_blank', 'noopener,noreferrer');
      return {};
    };
    b.onsizechange = ({ height }) => {
      if (typeof height === 'number' && Number.isFinite(height))
        frame.style.height = `${Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(height)))}px`;
    };
    b.onloggingmessage = ({ level, data }) => console.debug(`[MCP App ${level}]`, data);
  }
  return box;
}

/** Closes the bridges of app frames no longer in the page (their entries were rebuilt or removed). */
export function sweepApps() {
  for (const view of [...views]) if (!view.box.isConnected) view.close(false);
}

/** Tells every shown app it is going (`ui/resource-teardown`) and closes its bridge: the transcript is cleared. */
export function teardownApps() {
  for (const view of [...views]) view.close(true);
}
