// @ts-check
// The console: folds every frame into one state (transcript.js) and renders the shown session's transcript, the
// session list and the tool-server panel from it (the composer and the connect form: composer.js, connect-form.js).
// One socket (live.js) resumes each watched session after the last `seq` folded, so a reconnect continues the
// transcript instead of starting over.
import { ApiError, call } from './api.js';
import { createTranscript, tokens } from './chat.js';
import { bindComposer } from './composer.js';
import { bindConnectForm } from './connect-form.js';
import { apiKey, live } from './live.js';
import { createAttachments } from './resources.js';
import { createSchedulePanel } from './schedules.js';
import { createSpendPanel, money } from './spend.js';
import { createServerPanel } from './servers.js';
import { fold, initialState, sessionView } from './transcript.js';
import { readAllPages } from './pages.js';

/** @typedef {import('./transcript.js').ConsoleFrame} ConsoleFrame */
/** @typedef {import('./transcript.js').ServerRecord} ServerRecord */
/** @typedef {import('./transcript.js').ListedSession} ListedSession */
/** @typedef {import('./transcript.js').Usage} Usage */

/**
 * An element of the page, by id.
 * @template {HTMLElement} [T=HTMLElement]
 * @param {string} id
 * @returns {T}
 */
const $ = (id) => /** @type {T} */ (document.getElementById(id));
/** @param {string} text */
const status = (text) => ($('status').textContent = text);

let state = initialState;
let current = new URLSearchParams(location.hash.slice(1)).get('session') || 'default';
let connected = false;
/** The sessions the list shows (the one shown among them). */
let listed = new Set([current]);
/** @type {import('./live.js').Live | undefined} */
let events;

const transcript = createTranscript($('transcript'), {
  answer: (callId, decision, raiseTo) => {
    const raise = raiseTo !== undefined && { raiseTo };
    if (!events?.send({ type: 'approval', sessionId: current, callId, decision, ...raise }))
      status('not connected; try again in a moment');
  },
  elicit: (id, action, content) => {
    if (!events?.send({ type: 'elicitation', sessionId: current, id, action, ...(content && { content }) }))
      status('not connected; try again in a moment');
  },
  // An MCP App's `ui/message`: a user message of the shown session, as the composer sends one.
  app: { message: (content) => !!events?.send({ type: 'message', content, sessionId: current }) },
});
const attachments = createAttachments($('attachments'));
const servers = createServerPanel($('servers'), status, {
  attach: (ref) => attachments.add(ref),
  // A prompt goes as the user's turn, with the resources attached so far.
  sendPrompt: ({ prompt, content }) => {
    const resources = attachments.peek();
    const sent = !!events?.send({
      type: 'message',
      content,
      sessionId: current,
      prompt,
      ...(resources.length > 0 && { resources }),
    });
    if (sent) attachments.take();
    return sent;
  },
});

const schedules = createSchedulePanel({ panel: $('schedules-panel'), list: $('schedules') }, { open: show, status });
const spend = createSpendPanel({ panel: $('spend-panel'), list: $('spend') }, status);

let scheduled = false;
/** Renders from the state, at most once a frame. */
function render() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    transcript.render(sessionView(state, current).items);
    servers.render(state.servers);
    showHealth();
  });
}

/** @param {ConsoleFrame} frame */
function dispatch(frame) {
  // A refused client frame's error names no session: it belongs to the one shown.
  if (frame.event === 'error' && frame.data.sessionId === undefined)
    frame = { event: 'error', data: { ...frame.data, sessionId: current } };
  const before = state;
  state = fold(state, frame);
  if (state !== before) render();
  if (frame.event === 'mcpServerStatus') refreshStatus();
  if (frame.event === 'userMessage' && !listed.has(frame.data.sessionId)) loadSessions().catch(needKey);
  // What the shown session spent changes with each model request: a reply, a failed turn, a summary.
  if (
    (frame.event === 'response' ||
      frame.event === 'contextCompacted' ||
      (frame.event === 'error' && frame.data.turnId !== undefined)) &&
    frame.data.sessionId === current
  )
    reloadUsage();
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let usageTimer;
/** Reloads the session list (and so its usage) and the spend panel once the frames of a burst have come. */
function reloadUsage() {
  clearTimeout(usageTimer);
  usageTimer = setTimeout(() => {
    if (!connected) return;
    loadSessions().catch(needKey);
    spend.refresh();
  }, 250);
}

/** @param {Usage} u */
const usageDetail = (u) => `${tokens(u.promptTokens)} prompt + ${tokens(u.completionTokens)} completion`;
/** What the priced steps cost, per currency (`, $0.0042`), or nothing when none was priced. @param {Usage} u */
const spent = (u) => (u.costs ?? []).map(({ amount, currency }) => `, ${money(amount, currency)}`).join('');

/**
 * Asks for the API key when the service refuses us, then starts over with it. Other failures show as
 * the status, except while the socket is down (agentd restarting): the status says so already.
 * @param {unknown} err
 */
function needKey(err) {
  if (!(err instanceof ApiError) || err.status !== 401) {
    if (connected || !events) status(`error: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  $('key-form').hidden = false;
  $('key').focus();
  status('this service needs an API key');
}

/** The agent's status as last read from `/api/health`. @type {string | undefined} */
let agentStatus;
/** The agent's status and the tool servers the panel lists (how many of them connected), while connected. */
function showHealth() {
  if (!connected || agentStatus === undefined) return;
  const listed = Object.values(state.servers);
  const up = listed.filter((s) => s.status === 'connected').length;
  const count = `${listed.length} tool server${listed.length === 1 ? '' : 's'}`;
  status(`${agentStatus} · ${count}${up < listed.length ? ` (${up} connected)` : ''}`);
}
/** Reads the agent's health, then shows it. */
function refreshStatus() {
  call('GET', '/api/health')
    .then((/** @type {{ agent: { status: string } }} */ h) => {
      agentStatus = h.agent.status;
      showHealth();
    })
    .catch(needKey);
}

async function loadSessions() {
  const sessions = await readAllPages(async (cursor) => {
    /** @type {{ sessions: ListedSession[], nextCursor?: string }} */
    const page = await call('GET', `/api/sessions?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    return { items: page.sessions, nextCursor: page.nextCursor };
  });
  listed = new Set(sessions.map((s) => s.id).concat(current));
  state = fold(state, { event: 'sessionList', data: { sessions } });
  renderSessions();
}

/** The session list, each with the tokens it used (as last listed), and the shown session's usage. */
function renderSessions() {
  $('sessions').replaceChildren(
    ...[...listed].sort().map((id) => {
      const button = Object.assign(document.createElement('button'), { type: 'button', textContent: id });
      button.setAttribute('aria-current', String(id === current));
      button.addEventListener('click', () => show(id));
      const li = document.createElement('li');
      li.append(button);
      const u = state.usage[id];
      if (u)
        li.append(
          Object.assign(document.createElement('small'), {
            className: 'usage',
            textContent: `${tokens(u.totalTokens)} tokens${spent(u)}`,
            title: usageDetail(u),
          }),
        );
      return li;
    }),
  );
  const u = state.usage[current];
  $('session-usage').textContent = u ? `Used ${tokens(u.totalTokens)} tokens (${usageDetail(u)})${spent(u)}` : '';
}

async function loadServers() {
  /** @type {{ servers: ServerRecord[] }} */
  const { servers: list } = await call('GET', '/api/mcp/servers');
  dispatch({ event: 'serverList', data: { servers: list } });
}

/**
 * Shows a session: what the page holds of it at once, then its stored history after that
 * (replayed over the WebSocket) and its live events.
 * @param {string} sessionId
 */
function show(sessionId) {
  current = sessionId;
  location.hash = `session=${encodeURIComponent(sessionId)}`;
  $('session-name').textContent = sessionId;
  transcript.clear();
  listed.add(sessionId);
  renderSessions();
  render();
  events?.subscribe(sessionId);
  if (connected) loadSessions().catch(needKey);
}

/** Opens the socket once the service has taken the key (or needs none): no refused upgrade on load. */
function start() {
  call('GET', '/api/health').then(() => {
    if (events) return events.reconnect();
    events = live({
      path: '/',
      lastSeq: (sessionId) => state.sessions[sessionId]?.lastSeq,
      onMessage: (message) => dispatch(/** @type {ConsoleFrame} */ (message)),
      onState(link) {
        /** @type {HTMLButtonElement} */ ($('compact')).disabled = link !== 'open';
        if (link === 'open') {
          connected = true;
          composer.flush();
          refreshStatus();
          loadServers().catch(needKey);
          loadSessions().catch(needKey);
          schedules.start();
          spend.refresh();
        } else if (link === 'closed') {
          if (connected) status('disconnected; reconnecting…');
          connected = false;
        }
      },
    });
    show(current);
  }, needKey);
}

const composer = bindComposer(
  {
    form: $('composer'),
    message: $('message'),
    file: $('image'),
  },
  { live: () => events, sessionId: () => current, attachments, status },
);
$('cancel').addEventListener('click', () => events?.send({ type: 'cancel', sessionId: current }));
$('reset').addEventListener('click', () => events?.send({ type: 'reset', sessionId: current }));
// Answered by `contextCompacted` (the transcript shows it) or an `error` (shown as the others are).
$('compact').addEventListener('click', () => {
  if (!events?.send({ type: 'compact', sessionId: current })) status('not connected; try again in a moment');
});
$('new-session').addEventListener('submit', (e) => {
  e.preventDefault();
  const input = /** @type {HTMLInputElement} */ ($('new-session-id'));
  show(input.value.trim());
  input.value = '';
});
$('key-form').addEventListener('submit', (e) => {
  e.preventDefault();
  apiKey.set(/** @type {HTMLInputElement} */ ($('key')).value);
  $('key-form').hidden = true;
  start();
});
bindConnectForm({
  form: $('connect-form'),
  name: $('connect-name'),
  type: $('connect-type'),
  target: $('connect-target'),
  args: $('connect-args'),
  result: $('connect-result'),
});

// Whether this agentd serves the inspector (a file that answers either way: no failed request).
fetch('/inspect/status.json')
  .then((r) => (r.ok ? r.json() : { enabled: false }))
  .then(
    (/** @type {{ enabled?: boolean }} */ s) => ($('inspector-link').hidden = !s.enabled),
    () => {},
  );
start(); // asks for the key at once when the service needs one
