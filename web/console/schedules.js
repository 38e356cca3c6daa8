// @ts-check
// The schedules panel (docs/schedules.md): the caller's schedules with their next tick, pause and resume
// (`PATCH /api/schedules/{id}`), and each one's last runs, each linked to the session it ran in. The panel shows itself
// only once `GET /api/schedules` answers: a principal without the `schedule` (or `admin`) scope is refused (403) and
// sees no panel, and the page asks no more. Runs start and end with no frame on this page's socket (their sessions
// are not watched), so the list is read again every REFRESH_MS while the page is visible.
import { ApiError, call } from './api.js';
import { el } from './dom.js';

/** @typedef {{ id: string, owner: string, cron?: string, timezone?: string, everyMs?: number, paused: boolean, nextRunAt?: string }} Schedule */
/** @typedef {{ status: string, plannedAt: string, finishedAt?: string, session?: string, reason?: string }} Run */

/** Runs listed per schedule, newest first. */
const RUNS_SHOWN = 5;
const REFRESH_MS = 5000;

/** @param {string} iso */
const time = (iso) => el('time', { dateTime: iso, title: iso, textContent: new Date(iso).toLocaleTimeString() });

/** A schedule's path: its id in its owner's namespace (two principals may have one id; an admin lists both). @param {Schedule} s */
const pathOf = (s) => `/api/schedules/${encodeURIComponent(s.id)}?owner=${encodeURIComponent(s.owner)}`;

/** @param {Schedule} s */
const when = (s) =>
  s.cron !== undefined ? `cron ${s.cron}${s.timezone ? ` (${s.timezone})` : ''}` : `every ${(s.everyMs ?? 0) / 1000} s`;

/**
 * @param {{ panel: HTMLElement, list: HTMLElement }} elements `panel` is hidden until the list is read
 * @param {{ open(sessionId: string): void, status(text: string): void }} deps `open` shows a session in the console
 */
export function createSchedulePanel({ panel, list }, deps) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  /** Refused for this principal: asked no more until the page gets another key. */
  let refused = false;
  let reads = 0;

  /** @param {Run} run */
  function runItem(run) {
    const li = el('li', { className: `run run-${run.status}` }, el('span', { textContent: run.status }), ' ');
    li.append(time(run.plannedAt));
    if (run.session !== undefined) {
      const session = run.session;
      const link = el('a', { href: `#session=${encodeURIComponent(session)}`, textContent: session });
      link.addEventListener('click', (e) => {
        e.preventDefault();
        deps.open(session);
      });
      li.append(' ', link);
    }
    if (run.reason) li.title = run.reason;
    return li;
  }

  /** @param {Schedule} s @param {Run[]} runs */
  function scheduleItem(s, runs) {
    const toggle = el('button', { type: 'button', textContent: s.paused ? 'Resume' : 'Pause' });
    toggle.setAttribute('aria-label', `${s.paused ? 'Resume' : 'Pause'} ${s.id}`);
    toggle.addEventListener('click', () => {
      toggle.disabled = true;
      call('PATCH', pathOf(s), { paused: !s.paused }).then(refresh, (err) => {
        toggle.disabled = false;
        deps.status(`error: ${err instanceof Error ? err.message : String(err)}`);
      });
    });
    const state = s.paused
      ? el('span', { className: 'paused', textContent: 'paused' })
      : s.nextRunAt
        ? el('span', {}, 'next ', time(s.nextRunAt))
        : el('span', { textContent: 'no tick left' });
    const head = el('div', { className: 'row' }, el('strong', { textContent: s.id }), state, toggle);
    const item = el('li', { className: 'schedule' }, head, el('small', { textContent: when(s) }));
    item.dataset.schedule = s.id;
    item.append(
      runs.length === 0
        ? el('p', { className: 'note', textContent: 'No runs yet.' })
        : el('ol', { className: 'runs', ariaLabel: `Last runs of ${s.id}` }, ...runs.map(runItem)),
    );
    return item;
  }

  async function load() {
    /** @type {{ schedules: Schedule[] }} */
    const { schedules } = await call('GET', '/api/schedules');
    const runs = await Promise.all(
      schedules.map(async (s) => {
        const runsPath = `/api/schedules/${encodeURIComponent(s.id)}/runs?owner=${encodeURIComponent(s.owner)}`;
        /** @type {{ runs: Run[] }} */
        const page = await call('GET', `${runsPath}&limit=${RUNS_SHOWN}`);
        return page.runs;
      }),
    );
    list.replaceChildren(
      ...(schedules.length === 0
        ? [el('li', { className: 'note', textContent: 'No schedules.' })]
        : schedules.map((s, i) => scheduleItem(s, runs[i] ?? []))),
    );
    panel.hidden = false;
  }

  /** Reads the schedules and their runs now, then again every REFRESH_MS (not while the page is hidden). */
  function refresh() {
    clearTimeout(timer);
    if (refused) return;
    // Only the latest read arms the next one (a click may read while a timed read is under way).
    const mine = ++reads;
    const again = () => {
      if (mine === reads) timer = setTimeout(refresh, REFRESH_MS);
    };
    if (document.hidden) return void again();
    load().then(again, (/** @type {unknown} */ err) => {
      if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
        refused = true;
        panel.hidden = true;
        return;
      }
      deps.status(`error: ${err instanceof Error ? err.message : String(err)}`);
      again();
    });
  }

  return {
    /** Reads the panel now (the page connected, maybe with another key): a principal refused before is asked again. */
    start() {
      refused = false;
      refresh();
    },
  };
}
