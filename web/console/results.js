// @ts-check
// Tool results shown readably: MCP text content as text (JSON text pretty-printed and collapsible),
// images as images, anything else as collapsible JSON. Used by the transcript and the tool forms.
import { el } from './dom.js';

/** @param {unknown} value */
export const pretty = (value) =>
  typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? String(value));

/** A JSON value folded away under a summary. @param {unknown} value @param {string} summary */
function jsonBlock(value, summary, open = false) {
  const details = el(
    'details',
    { className: 'json' },
    el('summary', { textContent: summary }),
    el('pre', { textContent: pretty(value) }),
  );
  details.open = open;
  return details;
}

/** Text that holds a JSON object or array, parsed; otherwise undefined. @param {string} text */
function parseJson(text) {
  const t = text.trim();
  if (!(t.startsWith('{') && t.endsWith('}')) && !(t.startsWith('[') && t.endsWith(']'))) return undefined;
  try {
    return /** @type {unknown} */ (JSON.parse(t));
  } catch {
    return undefined;
  }
}

/**
 * One MCP content item: text as text (JSON text pretty-printed and collapsible), an image as an
 * image, anything else as collapsible JSON.
 * @param {unknown} part
 * @returns {Node}
 */
function contentPart(part) {
  const p = /** @type {{ type?: unknown, text?: unknown, data?: unknown, mimeType?: unknown }} */ (part ?? {});
  if (p.type === 'text' && typeof p.text === 'string') {
    const json = parseJson(p.text);
    return json === undefined ? el('div', { className: 'text', textContent: p.text }) : jsonBlock(json, 'JSON', true);
  }
  if (
    p.type === 'image' &&
    typeof p.data === 'string' &&
    typeof p.mimeType === 'string' &&
    p.mimeType.startsWith('image/')
  ) {
    return el('img', { src: `data:${p.mimeType};base64,${p.data}`, alt: `image (${p.mimeType})` });
  }
  return jsonBlock(part, typeof p.type === 'string' ? p.type : 'content');
}

/**
 * A tool's result: an MCP result (`{content, structuredContent?}`) shown part by part, `{error}` as
 * its text, anything else as JSON.
 * @param {unknown} result
 * @returns {Node[]}
 */
export function resultParts(result) {
  const r = /** @type {{ content?: unknown, structuredContent?: unknown, error?: unknown }} */ (result ?? {});
  if (Array.isArray(r.content)) {
    const parts = r.content.map(contentPart);
    if (r.structuredContent !== undefined) parts.push(jsonBlock(r.structuredContent, 'structured content'));
    return parts;
  }
  if (typeof r.error === 'string') return [el('div', { className: 'text', textContent: r.error })];
  return [jsonBlock(result, 'result', true)];
}
