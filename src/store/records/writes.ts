/**
 * What every engine does with a commit's writes before it decides them (types.ts' rules): names checked, each value
 * turned into its JSON text once, a record named at most once. A write that breaks a rule rejects the whole commit
 * with INTERNAL_ERROR (a caller's bug, never a stored state).
 */
import { AppError } from '../../errors/index.ts';
import type { IndexEntry, RecordQuery, RecordWrite } from './types.ts';

/** A namespace's or an index's name. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ID_MAX = 1024;

/** A write ready to decide and apply: `key` names the record in its store (`<ns>:<id>`), `json` its value. */
export type Prepared =
  | {
      op: 'put';
      key: string;
      ns: string;
      id: string;
      json: string;
      ifVersion?: number | undefined;
      index: readonly IndexEntry[];
      expiresAt?: number | undefined;
    }
  | { op: 'delete'; key: string; ns: string; id: string; ifVersion?: number | undefined };

const invalid = (message: string, details: Record<string, unknown> = {}): AppError =>
  new AppError('INTERNAL_ERROR', `record store: ${message}`, details);

export function checkName(name: string, what: string): string {
  if (typeof name !== 'string' || !NAME.test(name)) throw invalid(`invalid ${what} ${JSON.stringify(name)}`);
  return name;
}

export function checkId(id: string, what = 'id'): string {
  if (typeof id !== 'string' || id.length === 0 || id.length > ID_MAX)
    throw invalid(`an ${what} is 1 to ${ID_MAX} characters`, { [what]: String(id).slice(0, 80) });
  return id;
}

/** The key of a record within a store: its namespace has no ':', so the pair is unambiguous. */
export const recordKey = (ns: string, id: string): string => `${checkName(ns, 'namespace')}:${checkId(id)}`;

const checkVersion = (v: number | undefined): void => {
  if (v !== undefined && !(Number.isSafeInteger(v) && v >= 0)) throw invalid('ifVersion is a whole number >= 0');
};

function valueJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    throw invalid('a value is not serialisable as JSON', { cause: String(e) });
  }
  if (text === undefined) throw invalid('a value is not serialisable as JSON');
  return text;
}

function checkEntry(entry: IndexEntry): IndexEntry {
  checkName(entry.index, 'index');
  checkId(entry.group, 'group');
  if (!Number.isFinite(entry.score)) throw invalid('an index score is a finite number', { index: entry.index });
  return { index: entry.index, group: entry.group, score: entry.score };
}

/** The writes of one commit, checked and serialised. */
export function prepare(writes: readonly RecordWrite[]): Prepared[] {
  const seen = new Set<string>();
  return writes.map((w): Prepared => {
    const key = recordKey(w.ns, w.id);
    if (seen.has(key)) throw invalid('a record appears twice in one commit', { ns: w.ns, id: w.id });
    seen.add(key);
    checkVersion(w.ifVersion);
    if (w.op === 'delete') return { op: 'delete', key, ns: w.ns, id: w.id, ifVersion: w.ifVersion };
    if (w.expiresAt !== undefined && !Number.isSafeInteger(w.expiresAt)) throw invalid('expiresAt is whole epoch ms');
    const index = (w.index ?? []).map(checkEntry);
    const places = new Set(index.map((e) => `${e.index}\n${e.group}`));
    if (places.size !== index.length) throw invalid('a record is in an index group at most once', { id: w.id });
    return {
      op: 'put',
      key,
      ns: w.ns,
      id: w.id,
      json: valueJson(w.value),
      ifVersion: w.ifVersion,
      index,
      expiresAt: w.expiresAt,
    };
  });
}

export function checkQuery(q: RecordQuery): void {
  checkName(q.ns, 'namespace');
  checkName(q.index, 'index');
  checkId(q.group, 'group');
  if ([q.min, q.max, q.after?.score].some((n) => n !== undefined && Number.isNaN(n)))
    throw invalid('a query bound is a number');
  if (q.after && (!Number.isFinite(q.after.score) || typeof q.after.id !== 'string'))
    throw invalid('a cursor is a finite score and an id');
  if (q.limit !== undefined && !(Number.isSafeInteger(q.limit) && q.limit > 0)) throw invalid('limit is > 0');
}
