// @ts-check
// The bridge to Stately's hosted inspector: reads /inspect/ws and hands each frame to the inspector
// in the iframe with postMessage, as @statelyai/inspect's browser adapter does (the inspector says
// "@statelyai.connected" first; frames that came before are kept, the newest 1000, and sent then).
// Frames go from this page to the iframe only: they never leave the browser or agentd.
import { live } from './live.js';

const STATELY = 'https://stately.ai';
const KEEP = 1000;
const frame = /** @type {HTMLIFrameElement} */ (document.getElementById('stately'));
const status = /** @type {HTMLElement} */ (document.getElementById('status'));
/** @type {unknown[]} */
const waiting = [];
let connected = false;

/** @param {unknown} data */
const post = (data) => frame.contentWindow?.postMessage(data, STATELY);

window.addEventListener('message', (event) => {
  if (event.origin !== STATELY || event.data?.type !== '@statelyai.connected') return;
  connected = true;
  status.textContent = 'live in Stately';
  for (const data of waiting.splice(0)) post(data);
});

// Loaded only now that the listener above is in place, so its "connected" message cannot be missed.
frame.src = `${STATELY}/inspect`;

live({
  path: '/inspect/ws',
  onState(link) {
    if (link === 'open')
      status.textContent = connected ? 'live in Stately' : 'waiting for the Stately inspector to load…';
    if (link === 'closed') status.textContent = 'disconnected from agentd; reconnecting…';
  },
  onMessage(data) {
    if (/** @type {{ type?: unknown }} */ (data)?.type === 'resync') return;
    if (connected) return post(data);
    waiting.push(data);
    if (waiting.length > KEEP) waiting.shift();
  },
});
