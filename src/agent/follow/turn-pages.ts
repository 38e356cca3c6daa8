/**
 * Pages of turns across sessions, from the store's listing and turn indexes.
 * - `turnPage` (MCP `tasks/list`): in session key order, then in the order they began; a page starts after `from` (a
 *   session and the first seq of the last turn read), holds at most `limit` turns, and `more` tells whether any
 *   follow. `only` pages one session's turns, otherwise the sessions are those of `range`. A page costs the sessions
 *   and turns it answers, however many the store holds.
 * - `sessionsByRecency` (A2A `ListTasks`, newest first): the sessions of `owner` (all when undefined; or the one
 *   `only` names), most recently updated first, then by key (`EventStore.recent`), pulled from the store's index by
 *   update time a few at a time as the reader asks for them. Every turn of a session ends at or before its
 *   session's `updatedAt`, so a reader that takes sessions in this order can stop once the turns it holds come
 *   before the next session: what it read costs the sessions it took, however many the owner has.
 */
import type { SessionInfo, SessionRange } from '../../store/types.ts';
import type { FollowStore } from './types.ts';

/** Sessions listed at a time while a page fills: few at first (a listing may read each one's last line), then more. */
const FIRST_SESSIONS = 2;
const MOST_SESSIONS = 32;

export interface ListedTurn {
  sessionId: string;
  turnId: string;
  firstSeq: number;
}

export interface TurnPageQuery {
  range: Omit<SessionRange, 'after' | 'limit'>;
  only?: string | undefined;
  from?: { sessionId: string; after: number } | undefined;
  limit: number;
}

export async function turnPage(
  store: FollowStore,
  query: TurnPageQuery,
): Promise<{ turns: ListedTurn[]; more: boolean }> {
  const want = query.limit + 1; // one more tells whether any follow
  const out: ListedTurn[] = [];
  const take = (sessionId: string, spans: { turnId: string; firstSeq: number }[]) => {
    for (const { turnId, firstSeq } of spans) if (out.length < want) out.push({ sessionId, turnId, firstSeq });
  };
  const { from, only } = query;
  if (only !== undefined || from) {
    const sessionId = only ?? from?.sessionId ?? '';
    take(sessionId, await store.turns(sessionId, { after: from?.after ?? 0, limit: want }));
  }
  for (
    let after = from?.sessionId, limit = FIRST_SESSIONS;
    only === undefined && out.length < want;
    limit = Math.min(MOST_SESSIONS, limit * 2)
  ) {
    const sessions = await store.list({ ...query.range, ...(after !== undefined && { after }), limit });
    for (const s of sessions) if (out.length < want) take(s.id, await store.turns(s.id, { limit: want - out.length }));
    after = sessions.at(-1)?.id;
    if (sessions.length < limit) break;
  }
  return { turns: out.slice(0, query.limit), more: out.length > query.limit };
}

export async function* sessionsByRecency(
  store: FollowStore,
  owner: string | undefined,
  only?: string,
): AsyncGenerator<SessionInfo> {
  if (only !== undefined) {
    yield* (await store.list({ from: only, limit: 1 })).filter((s) => s.id === only);
    return;
  }
  for (let after: SessionInfo | undefined, limit = FIRST_SESSIONS; ; limit = Math.min(MOST_SESSIONS, limit * 2)) {
    const { sessions } = await store.recent({
      ...(owner !== undefined && { owner }),
      ...(after && { after: { id: after.id, updatedAt: after.updatedAt } }),
      limit,
    });
    yield* sessions;
    after = sessions.at(-1);
    if (sessions.length < limit) return;
  }
}
