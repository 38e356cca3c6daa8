// @ts-check
// A tool server's question (elicitation) as the console shows it: a form generated from its
// requested schema (string, number, integer, boolean, enum and multi-select enum properties), or
// for URL mode the link and an "I'm done" button; Accept / Decline / Cancel send the answer. Once
// answered it shows the answer and who gave it.
import { el } from './dom.js';
import { answeredBy } from './transcript.js';

/** @typedef {import('./transcript.js').Elicitation} Elicitation */
/** @typedef {(id: string, action: 'accept' | 'decline' | 'cancel', content?: Record<string, unknown>) => void} Elicit */

/**
 * @typedef {{ type?: string, title?: string, description?: string, enum?: unknown[], enumNames?: string[],
 *   oneOf?: { const: string, title?: string }[], items?: { enum?: string[], anyOf?: { const: string, title?: string }[] }, default?: unknown }} Property
 */

/** The choices of an enum property: its values and their labels. @param {Property} p */
function choices(p) {
  if (Array.isArray(p.oneOf)) return p.oneOf.map((o) => ({ value: o.const, label: o.title ?? o.const }));
  if (Array.isArray(p.enum)) return p.enum.map((v, i) => ({ value: String(v), label: p.enumNames?.[i] ?? String(v) }));
  if (p.items)
    return (p.items.anyOf ?? (p.items.enum ?? []).map((v) => ({ const: v, title: v }))).map((o) => ({
      value: o.const,
      label: o.title ?? o.const,
    }));
  return undefined;
}

/**
 * One field: its element and how to read its value (`undefined`: left empty).
 * @param {string} name @param {Property} p
 * @returns {{ node: HTMLElement, read: () => unknown }}
 */
function field(name, p) {
  const options = choices(p);
  if (p.type === 'array' && options) {
    const boxes = options.map((o) => {
      const box = el('input', {
        type: 'checkbox',
        value: o.value,
        checked: Array.isArray(p.default) && p.default.includes(o.value),
      });
      return { box, node: el('label', {}, box, el('span', { textContent: ` ${o.label} ` })) };
    });
    return {
      node: el('span', {}, ...boxes.map((b) => b.node)),
      read: () => boxes.filter((b) => b.box.checked).map((b) => b.box.value),
    };
  }
  if (options) {
    const select = el(
      'select',
      { name },
      el('option', { value: '', textContent: '—' }),
      ...options.map((o) => el('option', { value: o.value, textContent: o.label })),
    );
    if (typeof p.default === 'string') select.value = p.default;
    return { node: select, read: () => select.value || undefined };
  }
  if (p.type === 'boolean') {
    const box = el('input', { type: 'checkbox', name, checked: p.default === true });
    return { node: box, read: () => box.checked };
  }
  const numeric = p.type === 'number' || p.type === 'integer';
  const input = el('input', { type: numeric ? 'number' : 'text', name, step: p.type === 'integer' ? '1' : 'any' });
  if (p.default !== undefined) input.value = String(p.default);
  return { node: input, read: () => (input.value === '' ? undefined : numeric ? Number(input.value) : input.value) };
}

/**
 * @param {Elicitation} e
 * @param {Elicit} elicit
 * @returns {HTMLElement}
 */
export function elicitationBox(e, elicit) {
  const box = el('form', { className: 'elicitation' });
  box.dataset.id = e.id;
  box.append(el('p', { className: 'message', textContent: e.message }));
  if (e.answer) {
    box.append(
      el('span', {
        className: e.answer.action === 'accept' ? 'approved' : 'failed',
        textContent: `Answered: ${e.answer.action} ${answeredBy(e.answer)}`,
      }),
    );
    return box;
  }
  /** @type {[string, () => unknown][]} */
  const fields = [];
  if (e.mode === 'url') {
    box.append(el('a', { href: e.url ?? '', target: '_blank', rel: 'noopener noreferrer', textContent: e.url ?? '' }));
  } else {
    const props = /** @type {Record<string, Property>} */ (e.requestedSchema?.properties ?? {});
    const required = /** @type {string[]} */ (e.requestedSchema?.required ?? []);
    for (const [name, p] of Object.entries(props)) {
      const f = field(name, p);
      fields.push([name, f.read]);
      const label = `${p.title ?? name}${required.includes(name) ? ' *' : ''}`;
      box.append(
        el('label', { className: 'field', title: p.description ?? '' }, el('span', { textContent: label }), f.node),
      );
    }
  }
  /** @param {string} label @param {'accept' | 'decline' | 'cancel'} action */
  const button = (label, action) => {
    const b = el('button', { type: action === 'accept' ? 'submit' : 'button', className: action, textContent: label });
    if (action !== 'accept') b.addEventListener('click', () => elicit(e.id, action));
    return b;
  };
  box.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (e.mode === 'url') return elicit(e.id, 'accept');
    /** @type {Record<string, unknown>} */
    const content = {};
    for (const [name, read] of fields) {
      const value = read();
      if (value !== undefined) content[name] = value;
    }
    elicit(e.id, 'accept', content);
  });
  const until = e.expiresAt ? ` (until ${new Date(e.expiresAt).toLocaleTimeString()})` : '';
  box.append(
    el(
      'div',
      { className: 'actions' },
      el('span', { textContent: `Waiting for your answer${until} ` }),
      button(e.mode === 'url' ? "I'm done" : 'Accept', 'accept'),
      button('Decline', 'decline'),
      button('Cancel', 'cancel'),
    ),
  );
  return box;
}
