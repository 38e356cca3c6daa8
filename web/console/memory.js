// @ts-check
// The memory panel (issue 62): the caller's own memory (`/api/memory`) — its working-memory profile, edited and saved
// whole, and its items, newest first, each deleted on its own — and an export of it as JSON. Read when the panel is
// opened (and by its Refresh button); with memory off the service answers 503 and the panel says so. It mounts itself
// into the tool-server column (index.html loads it as a module of its own).
import { ApiError, call } from './api.js';
import { el } from './dom.js';
import { apiKey } from './live.js';

/** @typedef {{ id: string, text: string, tags: string[], createdAt: string }} MemoryItem */
/** @typedef {{ owner: string, profile: string, items: MemoryItem[] }} MemoryView */

const status = el('p', { className: 'memory-status', role: 'status' });
const profile = el('textarea', { id: 'memory-profile', rows: 4 });
const profileForm = el(
  'form',
  { className: 'memory-profile' },
  el('label', { htmlFor: 'memory-profile', textContent: 'Working memory (in every new turn)' }),
  profile,
  el('button', { type: 'submit', textContent: 'Save profile' }),
);
const items = el('ul', { className: 'memory-items', id: 'memory-items' });
const exportButton = el('button', { type: 'button', textContent: 'Export (JSON)' });
const refresh = el('button', { type: 'button', textContent: 'Refresh' });
const panel = el(
  'details',
  { id: 'memory' },
  el('summary', { textContent: 'Memory' }),
  status,
  profileForm,
  el('h3', { textContent: 'Remembered' }),
  items,
  el('div', { className: 'row' }, refresh, exportButton),
);
document.querySelector('aside')?.append(panel);

/** @param {unknown} err */
function show(err) {
  if (err instanceof ApiError && err.status === 503) status.textContent = 'Memory is off for this agent.';
  else
    status.textContent = `${err instanceof ApiError ? err.code : 'ERROR'}: ${err instanceof Error ? err.message : err}`;
}

/** @param {MemoryItem} item */
function itemRow(item) {
  const remove = el('button', { type: 'button', textContent: 'Delete', className: 'memory-delete' });
  remove.setAttribute('aria-label', `Delete "${item.text}"`);
  remove.addEventListener('click', () => {
    call('DELETE', `/api/memory/${encodeURIComponent(item.id)}`).then(load, show);
  });
  const tags = item.tags.length > 0 ? ` [${item.tags.join(', ')}]` : '';
  return el(
    'li',
    { className: 'memory-item' },
    el('span', { textContent: item.text + tags }),
    el('small', { textContent: ` ${new Date(item.createdAt).toLocaleString()} ` }),
    remove,
  );
}

/** Reads the caller's memory and shows it. */
function load() {
  status.textContent = 'loading…';
  call('GET', '/api/memory').then((/** @type {MemoryView} */ view) => {
    profile.value = view.profile;
    items.replaceChildren(...view.items.map(itemRow));
    status.textContent = `${view.items.length} item${view.items.length === 1 ? '' : 's'} remembered`;
  }, show);
}

profileForm.addEventListener('submit', (e) => {
  e.preventDefault();
  call('PUT', '/api/memory/profile', { text: profile.value }).then(() => {
    status.textContent = 'Profile saved.';
  }, show);
});
refresh.addEventListener('click', load);
// The export needs the key (a plain link would not send it): fetched, then saved from a blob.
exportButton.addEventListener('click', () => {
  const key = apiKey.get();
  fetch('/api/memory/export', { headers: key ? { Authorization: `Bearer ${key}` } : {} })
    .then(async (res) => {
      if (!res.ok) throw new ApiError(res.status, (await res.json().catch(() => ({})))?.error);
      const link = el('a', { href: URL.createObjectURL(await res.blob()), download: 'agentd-memory.json' });
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 0);
    })
    .catch(show);
});
panel.addEventListener('toggle', () => {
  if (panel.open) load();
});
