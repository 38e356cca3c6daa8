/**
 * The session transfer format of export and import (docs/sessions.md, "Export, import, fork"): NDJSON, one
 * stored event per line in seq order, `{"seq":N,"ts":"<ISO 8601 UTC>","event":{...}}\n`.
 * - The events carry their own version `v` (the line has none) and come back upcast, as from an older log.
 * - No `sessionId`: an import is a new session (a store's JSONL file imports as it is; its `sessionId` is ignored).
 * - `seq`s ascend strictly and are kept, so a `since` cursor means the same in both sessions; `ts` is kept too.
 * `parseTransfer` checks the whole text first: the first bad line throws INVALID_REQUEST with `details.line`
 * (1-based) and `details.issue`; non-UTF-8 or empty input throws too. Blank lines and CRLF are allowed.
 */
import { AppError } from '../errors/index.ts';
import { MAX_JSON_DEPTH, textTooDeep } from '../json-depth.ts';
import { checkSessionEvent, type SessionEvent } from './session-events.ts';

export const TRANSFER_MEDIA_TYPE = 'application/x-ndjson';

/** One line of the format: a stored event without its session. */
export interface TransferEntry {
  seq: number;
  ts: string;
  event: SessionEvent;
}

/** Nesting a line may have: room for payloads nesting MAX_JSON_DEPTH themselves, so a log agentd wrote always fits. */
export const MAX_LINE_DEPTH = 2 * MAX_JSON_DEPTH;

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z$/;
const KEYS = new Set(['seq', 'ts', 'event', 'sessionId']);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** One line of the format, with its newline. */
export function transferLine(entry: TransferEntry): string {
  return `{"seq":${entry.seq},"ts":${JSON.stringify(entry.ts)},"event":${JSON.stringify(entry.event)}}\n`;
}

/** The lines of `entries`, joined into pieces of about `pieceChars` characters (for a streamed body). */
export function* transferPieces(entries: Iterable<TransferEntry>, pieceChars = 64 * 1024): Generator<string> {
  let piece = '';
  for (const entry of entries) {
    piece += transferLine(entry);
    if (piece.length >= pieceChars) {
      yield piece;
      piece = '';
    }
  }
  if (piece !== '') yield piece;
}

const badLine = (line: number, issue: string, extra: Record<string, unknown> = {}) =>
  new AppError('INVALID_REQUEST', `Import line ${line}: ${issue}`, { line, issue, ...extra });

function parseLine(text: string, line: number, previousSeq: number): TransferEntry {
  if (textTooDeep(text, MAX_LINE_DEPTH))
    throw badLine(line, `nests JSON deeper than ${MAX_LINE_DEPTH} levels`, {
      reason: 'too_deep',
      limit: MAX_LINE_DEPTH,
    });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw badLine(line, `not JSON (${(e as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw badLine(line, 'must be a JSON object {seq, ts, event}');
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).find((k) => !KEYS.has(k));
  if (unknown !== undefined)
    throw badLine(line, `unknown field ${JSON.stringify(unknown)} (a line holds seq, ts and event)`);
  const { seq, ts, event } = fields;
  if (seq === undefined) throw badLine(line, 'seq is missing');
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1)
    throw badLine(line, 'seq must be a positive integer');
  if (seq <= previousSeq) throw badLine(line, `seq ${seq} must be greater than the previous line's (${previousSeq})`);
  if (typeof ts !== 'string' || !ISO_UTC.test(ts) || Number.isNaN(Date.parse(ts)))
    throw badLine(line, 'ts must be an ISO 8601 UTC time (2026-01-02T03:04:05.678Z)');
  if (event === undefined) throw badLine(line, 'event is missing');
  const checked = checkSessionEvent(event);
  if (!checked.ok) throw badLine(line, checked.issue);
  return { seq, ts, event: checked.event };
}

export function parseTransfer(bytes: Uint8Array): TransferEntry[] {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new AppError('INVALID_REQUEST', 'The import is not UTF-8 text', { issue: 'not UTF-8' });
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a byte order mark
  const entries: TransferEntry[] = [];
  let line = 0;
  for (let start = 0; start < text.length;) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    line++;
    const content = text.slice(start, text.charCodeAt(end - 1) === 0x0d && end > start ? end - 1 : end);
    start = end + 1;
    if (content.trim() === '') continue;
    entries.push(parseLine(content, line, entries.at(-1)?.seq ?? 0));
  }
  if (entries.length === 0) throw new AppError('INVALID_REQUEST', 'The import holds no event', { issue: 'empty' });
  return entries;
}
