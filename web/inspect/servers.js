// @ts-check
// The inspector's tool-server panel: for each tool server its status and, while connected, the
// capabilities agentd declared to it (roots, elicitation, sampling when on; whether calls carry a
// progress token; the log level asked for) and those the server declared back (tools, resources,
// prompts, logging, with listChanged and subscribe), and the questions it asked that wait for the
// user (elicitations, and sampling requests under `sampling: ask`).
//
// Contracts: reads `GET /api/mcp/servers` (the record's `capabilities`) with the console's API key
// (kept in this tab); `refresh()` reloads it, at most once per burst of calls. `showWaiting(list)`
// replaces the waiting questions (the page reads them from the live turns' `questions`); the
// question's text is `[content]` unless the inspector shows content.
import { apiKey } from './live.js';
import { el } from './dom.js';

/** @typedef {{ client: Record<string, unknown>, server: Record<string, unknown>, progress: boolean, logLevel?: string }} Capabilities */
/** @typedef {{ id: string, name: string, status: string, error?: string, capabilities?: Capabilities }} ServerRecord */
/**
 * A question of a running call's server that waits for the user, and the session whose turn runs the call.
 * @typedef {{ id: string, kind: 'elicitation' | 'sampling', serverId: string, callId: string, question?: string, expiresAt: string, session: string }} Waiting
 */

/**
 * A capability object as lines: each key, with its sub-flags (`listChanged`, `subscribe`) when it has any.
 * @param {Record<string, unknown>} caps
 */
function capabilityLines(caps) {
  const keys = Object.keys(caps);
  if (keys.length === 0) return [el('li', { className: 'none', textContent: 'none' })];
  return keys.map((key) => {
    const value = caps[key];
    const flags =
      value && typeof value === 'object'
        ? Object.entries(value)
            .filter(([, v]) => v === true)
            .map(([k]) => k)
        : [];
    const li = el('li', { textContent: flags.length ? `${key} (${flags.join(', ')})` : key });
    li.dataset.capability = key;
    return li;
  });
}

/** @param {Waiting} w */
function waitingLine(w) {
  const what =
    w.kind === 'sampling' ? 'sampling request' : `question${w.question === undefined ? '' : ` “${w.question}”`}`;
  const li = el('li', {
    textContent: `${what} · session ${w.session}, call ${w.callId} · expires ${new Date(w.expiresAt).toLocaleTimeString()}`,
  });
  li.dataset.waiting = w.id;
  return li;
}

/** @param {ServerRecord} s @param {Waiting[]} waiting  its questions waiting for the user */
function serverEntry(s, waiting) {
  const li = el('li', { className: 'server' }, el('strong', { textContent: s.name }), ` ${s.status}`);
  li.dataset.server = s.id;
  if (s.error) li.append(el('p', { className: 'error', textContent: s.error }));
  if (waiting.length)
    li.append(
      el('h3', { textContent: 'Waiting for the user' }),
      el('ul', { className: 'waiting' }, ...waiting.map(waitingLine)),
    );
  const c = s.capabilities;
  if (!c) return li;
  const declared = el(
    'ul',
    { className: 'caps client' },
    ...capabilityLines(c.client),
    el('li', { textContent: `progress: ${c.progress ? 'a token with every call' : 'off'}` }),
    el('li', { textContent: `logging level: ${c.logLevel ?? 'the server’s default'}` }),
  );
  const offered = el('ul', { className: 'caps server' }, ...capabilityLines(c.server));
  li.append(
    el('h3', { textContent: 'agentd declared' }),
    declared,
    el('h3', { textContent: 'The server declared' }),
    offered,
  );
  return li;
}

/** @param {HTMLElement} list  the panel's `<ul>` */
export function createServerPanel(list) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  /** @type {ServerRecord[] | undefined} */
  let servers;
  /** @type {Waiting[]} */
  let waiting = [];
  const render = () => {
    if (!servers) return;
    list.replaceChildren(
      ...(servers.length
        ? servers.map((s) =>
            serverEntry(
              s,
              waiting.filter((w) => w.serverId === s.id),
            ),
          )
        : [el('li', { textContent: 'No tool servers.' })]),
    );
  };
  const load = async () => {
    /** @type {Record<string, string>} */
    const headers = apiKey.get() ? { Authorization: `Bearer ${apiKey.get()}` } : {};
    const res = await fetch('/api/mcp/servers', { headers });
    if (!res.ok)
      return list.replaceChildren(el('li', { className: 'error', textContent: `tool servers: HTTP ${res.status}` }));
    servers = /** @type {{ servers: ServerRecord[] }} */ (await res.json()).servers;
    render();
  };
  return {
    refresh() {
      clearTimeout(timer);
      timer = setTimeout(() => void load().catch(() => {}), 200);
    },
    /** @param {Waiting[]} now  every question waiting for the user, across the live turns */
    showWaiting(now) {
      const key = (/** @type {Waiting[]} */ l) => l.map((w) => w.id).join();
      if (key(now) === key(waiting)) return;
      waiting = now;
      render();
    },
  };
}
