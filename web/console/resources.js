// @ts-check
// A tool server's resources in the console: its resources and resource templates (listed when the
// section is opened), a preview of one (text inline, an image shown, other binary as its size and
// MIME type), and the chips of the resources attached to the next message.
//
// Contracts:
// - `resourceBrowser` reads only (GET …/resources, GET …/resources/read?uri=); "Attach" hands
//   `{ serverId, uri }` to the chips, which the composer sends as the message's `resources`.
// - A template's URI is filled in by the person (its `{variables}` replaced) before preview or attach.
// - `createAttachments` keeps each (server, URI) once; `take()` returns them and clears the chips.
import { call } from './api.js';
import { el } from './dom.js';
import { lazySection } from './lazy.js';

/** @typedef {{ uri: string, name: string, description?: string, mimeType?: string }} Resource */
/** @typedef {{ uriTemplate: string, name: string, description?: string, mimeType?: string }} ResourceTemplate */
/** @typedef {{ uri: string, mimeType?: string, text?: string, blob?: string }} ResourceContent */
/** @typedef {{ serverId: string, uri: string }} ResourceRef */

/** @param {string} s */
const enc = (s) => encodeURIComponent(s);

/** Bytes of a base64 string. @param {string} b64 */
const byteSize = (b64) => Math.floor((b64.length * 3) / 4) - (b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0);

/**
 * What a read resource shows: text inline, images as images, other binary as its size and MIME type.
 * @param {ResourceContent[]} contents
 * @returns {HTMLElement[]}
 */
export function previewParts(contents) {
  return contents.map((c) => {
    if (c.text !== undefined) return el('pre', { className: 'text', textContent: c.text });
    const mime = c.mimeType ?? 'application/octet-stream';
    if (c.blob !== undefined && mime.startsWith('image/'))
      return el('img', { src: `data:${mime};base64,${c.blob}`, alt: `${c.uri} (${mime})` });
    return el('p', {
      className: 'binary',
      textContent: `binary: ${mime}, ${byteSize(c.blob ?? '').toLocaleString('en')} bytes`,
    });
  });
}

/**
 * The chips of the resources the next message attaches.
 * @param {HTMLElement} box  where the chips go (a list above the message field)
 */
export function createAttachments(box) {
  /** @type {ResourceRef[]} */
  let refs = [];
  const render = () => {
    box.hidden = refs.length === 0;
    box.replaceChildren(
      ...refs.map((r) => {
        const remove = el('button', { type: 'button', className: 'remove', textContent: '×', title: 'Remove' });
        remove.setAttribute('aria-label', `Remove ${r.uri}`);
        remove.addEventListener('click', () => {
          refs = refs.filter((x) => x !== r);
          render();
        });
        const chip = el('li', { className: 'chip' }, el('span', { textContent: `${r.serverId}: ${r.uri}` }), remove);
        chip.dataset.uri = r.uri;
        return chip;
      }),
    );
  };
  render();
  return {
    /** @param {ResourceRef} ref */
    add(ref) {
      if (!refs.some((r) => r.serverId === ref.serverId && r.uri === ref.uri)) refs = [...refs, ref];
      render();
    },
    /** The attached resources, then none. */
    take() {
      const out = refs;
      refs = [];
      render();
      return out;
    },
    /** The attached resources (kept). */
    peek: () => refs,
  };
}

/**
 * One resource (or a template's URI to fill in): Preview and Attach.
 * @param {string} serverId
 * @param {{ name: string, description?: string, uri: string, template: boolean }} r
 * @param {(ref: ResourceRef) => void} attach
 */
function resourceEntry(serverId, r, attach) {
  const preview = el('output', { className: 'resource-preview' });
  const uri = el('input', { value: r.uri, required: true });
  uri.setAttribute('aria-label', `URI of ${r.name}`);
  const currentUri = () => uri.value.trim();
  const show = el('button', { type: 'button', textContent: 'Preview' });
  show.addEventListener('click', () => {
    preview.textContent = 'reading…';
    call('GET', `/api/mcp/servers/${enc(serverId)}/resources/read?uri=${enc(currentUri())}`).then(
      (/** @type {{ contents: ResourceContent[] }} */ res) => preview.replaceChildren(...previewParts(res.contents)),
      (/** @type {any} */ err) => (preview.textContent = `${err?.code ?? 'ERROR'}: ${err?.message}`),
    );
  });
  const add = el('button', { type: 'button', textContent: 'Attach' });
  add.addEventListener('click', () => currentUri() && attach({ serverId, uri: currentUri() }));
  const li = el(
    'li',
    { className: r.template ? 'resource template' : 'resource' },
    el('strong', { textContent: r.name }),
    r.description ? el('small', { textContent: ` ${r.description}` }) : '',
    r.template ? uri : el('code', { textContent: r.uri }),
    el('div', { className: 'row' }, show, add),
    preview,
  );
  li.dataset.uri = r.uri;
  return li;
}

/**
 * A server's resources and templates, loaded when opened.
 * @param {string} serverId
 * @param {(ref: ResourceRef) => void} attach
 */
export function resourceBrowser(serverId, attach) {
  return lazySection(
    'resources',
    'Resources',
    `/api/mcp/servers/${enc(serverId)}/resources`,
    (/** @type {{ resources: Resource[], resourceTemplates: ResourceTemplate[] }} */ res) => {
      const items = [
        ...res.resources.map((r) => resourceEntry(serverId, { ...r, template: false }, attach)),
        ...res.resourceTemplates.map((t) =>
          resourceEntry(serverId, { ...t, uri: t.uriTemplate, template: true }, attach),
        ),
      ];
      return [
        items.length ? el('ul', { className: 'resource-list' }, ...items) : el('p', { textContent: 'No resources.' }),
      ];
    },
  );
}
