// The bridge to Stately's hosted inspector: reads /inspect/ws and hands each frame to the inspector
// in the iframe with postMessage, as @statelyai/inspect's browser adapter does (the inspector says
// "@statelyai.connected" first; frames that came before are kept, the newest 1000, and sent then).
// Frames go from this page to the iframe only: they never leave the browser or agentd.
const STATELY = 'https://stately.ai';
const KEEP = 1000;
const frame = document.getElementById('stately');
const status = document.getElementById('status');
const waiting = [];
let connected = false;

const post = (data) => frame.contentWindow?.postMessage(data, STATELY);

window.addEventListener('message', (event) => {
  if (event.origin !== STATELY || event.data?.type !== '@statelyai.connected') return;
  connected = true;
  status.textContent = 'live in Stately';
  for (const data of waiting.splice(0)) post(data);
});

// Loaded only now that the listener above is in place, so its "connected" message cannot be missed.
frame.src = `${STATELY}/inspect`;

function connect() {
  const url = new URL('/inspect/ws', location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const key = sessionStorage.getItem('agentd.apiKey');
  if (key) url.searchParams.set('token', key);
  const ws = new WebSocket(url);
  ws.onopen = () => (status.textContent = connected ? 'live in Stately' : 'waiting for the Stately inspector to load…');
  ws.onmessage = (m) => {
    const data = JSON.parse(m.data);
    if (data.type === 'resync') return;
    if (connected) return post(data);
    waiting.push(data);
    if (waiting.length > KEEP) waiting.shift();
  };
  ws.onclose = () => {
    status.textContent = 'disconnected from agentd; reconnecting…';
    setTimeout(connect, 2000);
  };
}
connect();
