// @ts-check
// A budget question in the transcript (docs/budgets.md): a model step that would pass a principal's budget, asked as
// an approval of the tool `agentd/budget` on the server `agentd` (its args: principal, budget, limit, used, estimate,
// currency, resetTime). Shown in agentd's words (the frame's `message`, the sentence every face asks it with) and
// when it resets, with Approve, "Approve and raise to" a new limit for the period (the approval frame's
// `raiseTo`) and Deny; once answered, who answered and the raise.
import { el } from './dom.js';
import { money } from './spend.js';
import { answeredBy } from './transcript.js';

/** @typedef {import('./transcript.js').ToolItem} ToolItem */
/** @typedef {(callId: string, decision: 'approve' | 'deny', raiseTo?: number) => void} Answer */
/**
 * @typedef {{ principal: string, budget: 'session' | 'day' | 'month', limit: number, used: number, estimate: number,
 *   currency: string, resetTime?: string }} BudgetArgs
 */

const PERIOD = { session: 'per-session', day: 'daily', month: 'monthly' };

/** The question's args, when they are a budget's (else the entry is shown as any approval). @param {unknown} args */
function budgetArgs(args) {
  const a = /** @type {Partial<Record<keyof BudgetArgs, unknown>>} */ (args ?? {});
  const numbers = [a.limit, a.used, a.estimate].every((n) => typeof n === 'number');
  const known = typeof a.budget === 'string' && a.budget in PERIOD;
  return numbers && known && typeof a.principal === 'string' && typeof a.currency === 'string'
    ? /** @type {BudgetArgs} */ (a)
    : undefined;
}

/** @param {ToolItem} item */
export const isBudgetQuestion = (item) =>
  item.toolName === 'agentd/budget' && item.serverId === 'agentd' && budgetArgs(item.args) !== undefined;

/** A limit to offer: twice the current one, at least what the step needs, rounded up to two significant digits. @param {BudgetArgs} a */
function suggested(a) {
  const want = Math.max(a.limit * 2, a.used + a.estimate);
  const step = 10 ** (Math.floor(Math.log10(want)) - 1);
  return Number((Math.ceil(want / step - 1e-9) * step).toPrecision(2));
}

/**
 * @param {ToolItem} item
 * @param {Answer} answer
 */
export function budgetEntry(item, answer) {
  const a = /** @type {BudgetArgs} */ (budgetArgs(item.args));
  /** @param {number} n */
  const m = (n) => money(n, a.currency);
  const li = el('li', { className: 'tool budget' }, el('strong', { textContent: 'Budget question' }));
  // The sentence agentd asks it with on every face (the frame's `message`).
  li.append(el('p', { className: 'budget-message', textContent: item.approval?.message ?? '' }));
  if (a.resetTime !== undefined)
    li.append(
      el(
        'p',
        { className: 'meta' },
        'It resets ',
        el('time', { dateTime: a.resetTime, textContent: new Date(a.resetTime).toLocaleString() }),
        '.',
      ),
    );
  const box = el('div', { className: 'approval' });
  box.dataset.callId = item.callId;
  const v = item.approval?.verdict;
  if (v) {
    const raised = v.raiseTo !== undefined ? `, the ${PERIOD[a.budget]} limit raised to ${m(v.raiseTo)}` : '';
    const text = `${v.decision === 'approve' ? 'Approved' : 'Denied'} ${answeredBy(v)}${raised}${v.reason ? `: ${v.reason}` : ''}`;
    box.append(el('span', { className: v.decision === 'approve' ? 'approved' : 'failed', textContent: text }));
  } else if (item.approval) {
    /** @param {string} label @param {'approve' | 'deny'} decision */
    const button = (label, decision) => {
      const b = el('button', { type: 'button', className: decision, textContent: label });
      b.addEventListener('click', () => answer(item.callId, decision));
      return b;
    };
    const limit = el('input', { type: 'number', min: String(a.limit), step: 'any', required: true });
    limit.value = String(suggested(a));
    limit.setAttribute('aria-label', `New ${PERIOD[a.budget]} limit (${a.currency})`);
    const raise = el(
      'form',
      { className: 'raise' },
      el('button', { type: 'submit', className: 'approve', textContent: 'Approve and raise to' }),
      limit,
      el('span', { textContent: a.currency }),
    );
    raise.addEventListener('submit', (e) => {
      e.preventDefault();
      answer(item.callId, 'approve', Number(limit.value));
    });
    box.append(button('Approve', 'approve'), raise);
    box.append(button('Deny', 'deny'));
  }
  li.append(box);
  return li;
}
