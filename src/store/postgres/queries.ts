/**
 * The listings' statements, built from fixed fragments with every value a parameter (`@.` stands for the schema,
 * connection.ts `qualify`). Exported so the tests can EXPLAIN exactly what the store runs.
 */
import { splitSessionKey } from '../../session-id.ts';
import type { RecentQuery, SessionRange } from '../types.ts';
import { compareKeys } from '../session-range.ts';

export interface Statement {
  text: string;
  values: unknown[];
}

/** A session key as stored: its UTF-8 bytes, so `bytea` order is code point order. */
export const keyBytes = (key: string): Buffer => Buffer.from(key, 'utf8');

/** The owner a key is indexed under by recency: its principal, '' for keys without one. */
export const ownerOfKey = (key: string): string => splitSessionKey(key).owner ?? '';

/** The kept totals' scope of `owner` (every session's: `*`). */
export const scopeOf = (owner: string | undefined): string => (owner === undefined ? '*' : `o:${owner}`);

const COLUMNS = 'SELECT session_id, last_seq, updated_at FROM @.agentd_sessions WHERE last_seq > 0';

/** `list(range)`: a range of the primary key, in byte order. */
export function listStatement(range: SessionRange = {}): Statement {
  const values: unknown[] = [];
  const where: string[] = [];
  const bound = (op: string, key: string) => {
    values.push(keyBytes(key));
    where.push(`session_id ${op} $${values.length}`);
  };
  const { after, from, below } = range;
  if (after !== undefined && (from === undefined || compareKeys(after, from) >= 0)) bound('>', after);
  else if (from !== undefined) bound('>=', from);
  if (below !== undefined) bound('<', below);
  let text = `${COLUMNS}${where.map((w) => ` AND ${w}`).join('')} ORDER BY session_id`;
  if (range.limit !== undefined) {
    values.push(range.limit);
    text += ` LIMIT $${values.length}`;
  }
  return { text, values };
}

/**
 * `recent(query)`: a range of the index by recency (all sessions, or one owner's), newest first, ties by key. After a
 * cursor, two ranges of it, each at most `limit`: the cursor's time past its key, then the older times.
 */
export function recentStatement({ owner, after, limit }: RecentQuery): Statement {
  const values: unknown[] = [limit];
  const byOwner = owner === undefined ? '' : (values.push(owner), ` AND owner = $${values.length}`);
  const order = 'ORDER BY updated_at DESC, session_id';
  if (!after) return { text: `${COLUMNS}${byOwner} ${order} LIMIT $1`, values };
  values.push(after.updatedAt, keyBytes(after.id));
  const [u, id] = [`$${values.length - 1}`, `$${values.length}`];
  const text =
    `SELECT * FROM ((${COLUMNS}${byOwner} AND updated_at = ${u} AND session_id > ${id} ${order} LIMIT $1)` +
    ` UNION ALL (${COLUMNS}${byOwner} AND updated_at < ${u} ${order} LIMIT $1)) AS page ${order} LIMIT $1`;
  return { text, values };
}
