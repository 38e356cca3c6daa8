import { createHash } from 'node:crypto';

/**
 * Session id ⇄ file name `<stem>.jsonl`, injective and safe on every common file system: `a-z`, `0-9` and `-` stay;
 * an upper-case letter becomes `_` + its lower case and `_` becomes `__` (no collisions on case-insensitive file
 * systems); every other character becomes `%XX` per UTF-8 byte, so `/`, `.`, NUL and non-ASCII text are inert.
 * A stem longer than {@link MAX_STEM} becomes `<readable prefix>~<sha256 of the id>`; its id is read from the events
 * inside the file and checked against the name.
 */

const FILE_SUFFIX = '.jsonl';
const MAX_STEM = 200;
const HASHED_PREFIX = 120;

/** A file name read back: its id, or for a hashed name the start of its id that the name keeps. */
export type ParsedFileName = { kind: 'plain'; id: string } | { kind: 'hashed'; idStart: string };

const isKept = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d;
const isUpper = (c: number) => c >= 0x41 && c <= 0x5a;
const hex = (b: number) => '%' + b.toString(16).toUpperCase().padStart(2, '0');

/** Tokens of the stem, one per character of the id (an escaped character is one token). */
function encodeTokens(id: string): string[] {
  const tokens: string[] = [];
  for (const ch of id) {
    const c = ch.codePointAt(0) ?? 0;
    if (isKept(c)) tokens.push(ch);
    else if (isUpper(c)) tokens.push('_' + ch.toLowerCase());
    else if (ch === '_') tokens.push('__');
    else tokens.push(Array.from(Buffer.from(ch, 'utf8'), hex).join(''));
  }
  return tokens;
}

/** The file name of a session's stream. `id` must have passed the store's guard (session-id.ts). */
export function fileNameOf(id: string): string {
  const tokens = encodeTokens(id);
  const stem = tokens.join('');
  if (stem.length <= MAX_STEM) return stem + FILE_SUFFIX;
  let prefix = '';
  for (const t of tokens) {
    if (prefix.length + t.length > HASHED_PREFIX) break;
    prefix += t;
  }
  const digest = createHash('sha256').update(id, 'utf8').digest('hex');
  return `${prefix}~${digest}${FILE_SUFFIX}`;
}

function decodeStem(stem: string): string | undefined {
  const out: string[] = [];
  const bytes: number[] = [];
  const flushBytes = (): boolean => {
    if (bytes.length === 0) return true;
    try {
      out.push(new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes)));
    } catch {
      return false;
    }
    bytes.length = 0;
    return true;
  };
  for (let i = 0; i < stem.length;) {
    const ch = stem[i] ?? '';
    if (ch === '%') {
      const pair = stem.slice(i + 1, i + 3);
      if (!/^[0-9A-F]{2}$/.test(pair)) return undefined;
      bytes.push(parseInt(pair, 16));
      i += 3;
      continue;
    }
    if (!flushBytes()) return undefined;
    if (ch === '_') {
      const next = stem[i + 1] ?? '';
      if (next === '_') out.push('_');
      else if (/^[a-z]$/.test(next)) out.push(next.toUpperCase());
      else return undefined;
      i += 2;
    } else if (isKept(ch.charCodeAt(0))) {
      out.push(ch);
      i += 1;
    } else return undefined;
  }
  return flushBytes() ? out.join('') : undefined;
}

/**
 * Reads a directory entry: a decodable stream file, a hashed one (with the start of its id, '' when it does not
 * decode), or `undefined` for anything this store did not write. Only canonical encodings decode, so each session has
 * exactly one possible file.
 */
export function parseFileName(name: string): ParsedFileName | undefined {
  if (!name.endsWith(FILE_SUFFIX)) return undefined;
  const stem = name.slice(0, -FILE_SUFFIX.length);
  if (stem.includes('~'))
    return /~[0-9a-f]{64}$/.test(stem)
      ? { kind: 'hashed', idStart: decodeStem(stem.slice(0, stem.indexOf('~'))) ?? '' }
      : undefined;
  const id = decodeStem(stem);
  if (id === undefined || id.length === 0 || fileNameOf(id) !== name) return undefined;
  return { kind: 'plain', id };
}
