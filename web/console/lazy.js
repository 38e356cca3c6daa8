// @ts-check
// A panel section loaded on first opening: a `<details>` whose content comes from a REST read.
import { call } from './api.js';
import { el } from './dom.js';

/**
 * A `<details>` titled `title` that reads `path` (GET) when first opened and appends what `render` makes of the
 * answer (or the failure's message).
 * @template T
 * @param {string} className
 * @param {string} title
 * @param {string} path
 * @param {(body: T) => (Node | string)[]} render
 */
export function lazySection(className, title, path, render) {
  const box = el('details', { className }, el('summary', { textContent: title }));
  box.addEventListener('toggle', () => {
    if (!box.open || box.dataset.loaded) return;
    box.dataset.loaded = 'true';
    call('GET', path).then(
      (/** @type {T} */ body) => box.append(...render(body)),
      (/** @type {Error} */ err) => box.append(el('p', { className: 'error', textContent: err.message })),
    );
  });
  return box;
}
