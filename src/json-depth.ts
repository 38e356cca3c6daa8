/** Nesting allowed in JSON that untrusted peers send (request bodies, frames, tool arguments). */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` nests objects or arrays deeper than `max` levels (a scalar is depth 0); iterative, so never overflows the stack. */
export function tooDeep(value: unknown, max = MAX_JSON_DEPTH): boolean {
  let level: unknown[] = [value];
  for (let depth = 0; level.length > 0; depth++) {
    const next: unknown[] = [];
    for (const v of level) {
      if (typeof v !== 'object' || v === null) continue;
      if (depth >= max) return true;
      for (const child of Array.isArray(v) ? v : Object.values(v)) next.push(child);
    }
    level = next;
  }
  return false;
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Index of the quote that closes the string opened at `open` (-1: none). */
function closingQuote(text: string, open: number): number {
  for (let q = text.indexOf('"', open + 1); q >= 0; q = text.indexOf('"', q + 1)) {
    let slashes = 0;
    while (text.charCodeAt(q - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q;
  }
  return -1;
}

/**
 * `tooDeep(JSON.parse(text))` for valid JSON, judged from the text before parsing, so a hostile deep
 * document is refused without being built. Malformed text is not judged here (JSON.parse reports it).
 */
export function textTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
      if (i < 0) return false;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}
