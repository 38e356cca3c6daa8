// @ts-check
// The model's replies as markdown: `marked` (GitHub-flavoured: tables, fences, autolinks) turns the
// text into HTML, DOMPurify keeps what is safe of it. Contracts:
// - Raw HTML in the markdown is shown as text, never parsed (marked's `html` renderer escapes it).
// - What reaches the page has no script, no event handler, no frame, no form, no `style`; a link
//   goes only to http(s), mailto or a relative address, and opens in a new tab without an opener
//   or a referrer (`target=_blank`, `rel="noopener noreferrer"`).
// - `showMarkdown(node, text)` re-renders into the same element, at most once per animation frame
//   while a reply streams; `done` renders at once, so a finished reply is never behind its text.
import { Marked } from './marked.js';
import DOMPurify from './purify.js';

/** @param {string} text */
const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const marked = new Marked({
  gfm: true,
  renderer: {
    html: ({ text }) => escapeHtml(text),
  },
});

/** http(s), mailto, or an address without a scheme (DOMPurify tests it with the whitespace taken out). */
const SAFE_URL = /^(?:https?:|mailto:|(?![a-z][a-z\d+.-]*:))/i;

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName !== 'A') return;
  node.setAttribute('target', '_blank');
  node.setAttribute('rel', 'noopener noreferrer');
});

/** @type {import('dompurify').Config} */
const PURIFY = {
  ALLOWED_URI_REGEXP: SAFE_URL,
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'svg', 'math'],
  FORBID_ATTR: ['style', 'class', 'id'],
};

/** Markdown text as a sanitized fragment. @param {string} text @returns {DocumentFragment} */
export function markdown(text) {
  // trimmed: marked ends each block with a newline, which would show as a text node after the last one
  const html = /** @type {string} */ (marked.parse(text, { async: false })).trim();
  return DOMPurify.sanitize(html, { ...PURIFY, RETURN_DOM_FRAGMENT: true });
}

/** The text each element waits to show (one frame is asked for per element at most). @type {WeakMap<Element, string>} */
const waiting = new WeakMap();

/**
 * Shows `text` as markdown in `node`: at once when `done`, else in the next animation frame (the
 * latest text wins; the frames between chunks cost one render).
 * @param {HTMLElement} node @param {string} text @param {boolean} done
 */
export function showMarkdown(node, text, done) {
  if (done) {
    waiting.delete(node);
    node.replaceChildren(markdown(text));
    return;
  }
  const pending = waiting.has(node);
  waiting.set(node, text);
  if (pending) return;
  requestAnimationFrame(() => {
    const latest = waiting.get(node);
    if (latest === undefined) return;
    waiting.delete(node);
    node.replaceChildren(markdown(latest));
  });
}
