// @ts-check
// The spend panel (docs/budgets.md#usage-report): what the caller spent on the model today and this month against its
// budgets (`GET /api/usage`: the limit in force, what remains, when each period resets, the limit per session), or,
// without budgets, this month's spend; an admin's report is everyone's, shown as such beside its own budgets. Read
// when the page connects, after a turn of the shown session ends, and every REFRESH_MS while the page is visible;
// hidden while the report is refused.
import { ApiError, call } from './api.js';
import { el } from './dom.js';

/** @typedef {{ spent: number, limit?: number, remaining?: number, raised?: true, resetTime: string }} PeriodStatus */
/** @typedef {{ principal: string, currency: string, hard: boolean, session?: number, day: PeriodStatus, month: PeriodStatus }} Budgets */
/**
 * The fields of `GET /api/usage` the panel shows (src/spend/feature/routes.ts has them all).
 * @typedef {{ principal?: string, totals: { amount: number, currency: string }[], budgets?: Budgets }} UsageReport
 */

/**
 * An amount of money as the console shows it: three significant digits below 1 (costs of a few steps are fractions
 * of a cent), cents above.
 * @param {number} amount
 * @param {string} currency
 */
export const money = (amount, currency) =>
  new Intl.NumberFormat('en', {
    style: 'currency',
    currency,
    ...(amount !== 0 && Math.abs(amount) < 1 ? { maximumSignificantDigits: 3 } : {}),
  }).format(amount);

/** @param {{ amount: number, currency: string }[]} costs */
const moneys = (costs, none = '') =>
  costs.length === 0 ? none : costs.map((c) => money(c.amount, c.currency)).join(' + ');

/** @param {string} iso */
const resetAt = (iso) => {
  const at = new Date(iso);
  const sameDay = at.toDateString() === new Date().toDateString();
  return el('time', {
    dateTime: iso,
    title: iso,
    textContent: sameDay ? at.toLocaleTimeString() : at.toLocaleString(),
  });
};

/**
 * One period against its limit: spent of limit, a meter, what remains and when it resets.
 * @param {string} label
 * @param {PeriodStatus} p
 * @param {string} currency
 */
function periodRow(label, p, currency) {
  const row = el('li', { className: 'spend-period' });
  row.dataset.period = label;
  const over = p.limit !== undefined && p.spent >= p.limit;
  const figures =
    p.limit === undefined
      ? `${money(p.spent, currency)} (no limit)`
      : `${money(p.spent, currency)} of ${money(p.limit, currency)}${p.raised ? ' (raised)' : ''}`;
  row.append(el('strong', { textContent: `${label}: ` }), el('span', { className: 'figures', textContent: figures }));
  if (p.limit !== undefined) {
    const meter = el('meter', { min: 0, max: p.limit, value: Math.min(p.spent, p.limit), high: p.limit * 0.8 });
    meter.setAttribute('aria-label', `${label}: spent of the limit`);
    row.append(meter);
  }
  const left = p.remaining === undefined ? '' : over ? 'none left · ' : `${money(p.remaining, currency)} left · `;
  row.append(el('small', { className: over ? 'failed' : '' }, `${left}resets `, resetAt(p.resetTime)));
  return row;
}

/** @param {UsageReport} report */
function rows(report) {
  const b = report.budgets;
  const everyone = report.principal === undefined;
  const month = moneys(report.totals, money(0, b?.currency ?? 'USD'));
  if (!b) return [el('li', { textContent: `${everyone ? 'Everyone, this month' : 'This month'}: ${month}` })];
  const list = [periodRow('Today', b.day, b.currency), periodRow('This month', b.month, b.currency)];
  if (b.session !== undefined)
    list.push(el('li', { className: 'note-line', textContent: `Per session: ${money(b.session, b.currency)}` }));
  if (b.hard) list.push(el('li', { className: 'note-line', textContent: 'Past a limit, a step is refused at once.' }));
  if (everyone) list.push(el('li', { className: 'note-line', textContent: `Everyone, this month: ${month}` }));
  return list;
}

/** Spend changes in other sessions and on other instances too: the panel reads again this often while visible. */
const REFRESH_MS = 10_000;

/**
 * @param {{ panel: HTMLElement, list: HTMLElement }} elements `panel` is hidden until a report is read
 * @param {(text: string) => void} status
 */
export function createSpendPanel({ panel, list }, status) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let reads = 0;
  /** Reads the report now, then again every REFRESH_MS (not while the page is hidden); only the latest read shows. */
  function refresh() {
    clearTimeout(timer);
    const mine = ++reads;
    const again = () => {
      if (mine === reads) timer = setTimeout(refresh, REFRESH_MS);
    };
    if (document.hidden) return void again();
    call('GET', '/api/usage?groupBy=day').then(
      (/** @type {UsageReport} */ report) => {
        if (mine !== reads) return;
        list.replaceChildren(...rows(report));
        panel.hidden = false;
        again();
      },
      (/** @type {unknown} */ err) => {
        // Refused (another key may be given later: the page connects again and reads anew).
        if (err instanceof ApiError && (err.status === 401 || err.status === 403)) return void (panel.hidden = true);
        status(`error: ${err instanceof Error ? err.message : String(err)}`);
        again();
      },
    );
  }
  return { refresh };
}
