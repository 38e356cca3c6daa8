// The console: wires the transcript, the sessions list and the tool-server panel to the service.
import { ApiError, apiKey, call, connectEvents } from './api.js';
import { createTranscript } from './chat.js';
import { createServerPanel } from './servers.js';

const $ = (id) => document.getElementById(id);
const status = (text) => ($('status').textContent = text);
const transcript = createTranscript($('transcript'), {
  answer: (callId, decision) => events.send({ type: 'approval', sessionId: current, callId, decision }) || status('not connected; try again in a moment'),
});
const servers = createServerPanel($('servers'), status);
let current = new URLSearchParams(location.hash.slice(1)).get('session') || 'default';
let connected = false;

/** Asks for the API key when the service refuses us, then starts over with it. */
function needKey(err) {
  if (!(err instanceof ApiError) || err.status !== 401) return status(`error: ${err.message}`);
  $('key-form').hidden = false;
  $('key').focus();
  status('this service needs an API key');
}

/** The agent's health, shown while connected. */
function refreshStatus() {
  call('GET', '/api/health')
    .then((h) => connected && status(`${h.agent.status} · ${h.agent.connectedServers} tool server(s)`))
    .catch(needKey);
}

async function loadSessions() {
  const { sessions } = await call('GET', '/api/sessions');
  const ids = new Set(sessions.map((s) => s.id).concat(current));
  $('sessions').replaceChildren(
    ...[...ids].sort().map((id) => {
      const button = Object.assign(document.createElement('button'), { type: 'button', textContent: id });
      button.setAttribute('aria-current', String(id === current));
      button.addEventListener('click', () => show(id));
      const li = document.createElement('li');
      li.append(button);
      return li;
    }),
  );
}

/** Shows a session: its stored history first (replayed over the WebSocket), then its live events. */
function show(sessionId) {
  current = sessionId;
  location.hash = `session=${encodeURIComponent(sessionId)}`;
  $('session-name').textContent = sessionId;
  transcript.clear();
  events.send({ type: 'subscribe', sessionId, since: 0 });
  loadSessions().catch(needKey);
}

const events = connectEvents({
  onOpen() {
    connected = true;
    refreshStatus();
    show(current);
    servers.load().catch(needKey);
  },
  onClose() {
    if (connected) status('disconnected; reconnecting…');
    connected = false;
  },
  onEvent(event, data) {
    if (event === 'mcpServerStatus') {
      servers.update(data);
      return refreshStatus();
    }
    if (data.sessionId === current || (event === 'error' && data.sessionId === undefined)) transcript.show(event, data);
    if (event === 'userMessage' && data.sessionId !== current) loadSessions().catch(needKey);
  },
});

async function imageData(file) {
  if (!file) return undefined;
  const url = await new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
  return { base64: url.slice(url.indexOf(',') + 1), mimeType: file.type };
}

$('composer').addEventListener('submit', async (e) => {
  e.preventDefault();
  const content = $('message').value.trim();
  if (!content) return;
  const image = await imageData($('image').files[0]);
  if (!events.send({ type: 'message', content, sessionId: current, ...(image && { imageData: image }) })) return status('not connected; try again in a moment');
  $('message').value = '';
  $('image').value = '';
});
$('message').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey) {
    e.preventDefault();
    $('composer').requestSubmit();
  }
});
$('cancel').addEventListener('click', () => events.send({ type: 'cancel', sessionId: current }));
$('reset').addEventListener('click', () => events.send({ type: 'reset', sessionId: current }));
$('new-session').addEventListener('submit', (e) => {
  e.preventDefault();
  show($('new-session-id').value.trim());
  $('new-session-id').value = '';
});
$('key-form').addEventListener('submit', (e) => {
  e.preventDefault();
  apiKey.set($('key').value);
  $('key-form').hidden = true;
  events.reconnect();
});
$('connect-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const type = $('connect-type').value;
  const target = $('connect-target').value.trim();
  const args = $('connect-args').value.split('\n').map((a) => a.trim()).filter(Boolean);
  const config = type === 'stdio' ? { type, command: target, args } : { type, baseUrl: target };
  $('connect-result').textContent = 'connecting…';
  try {
    const res = await call('POST', '/api/connect-server', { name: $('connect-name').value.trim(), config });
    $('connect-result').textContent = `${res.name}: ${res.status}`;
  } catch (err) {
    $('connect-result').textContent = `${err.code ?? 'ERROR'}: ${err.message}`;
  }
});

fetch('/inspect').then((r) => ($('inspector-link').hidden = !r.ok), () => {});
refreshStatus(); // asks for the key at once when the service needs one
