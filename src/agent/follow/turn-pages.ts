/**
 * The sessions whose turns a listing pages (A2A `ListTasks`, newest first): those of `range` (or the one `only`
 * names), most recently updated first. Every turn of a session ends at or before its session's `updatedAt`, so a
 * reader that takes sessions in this order can stop once the turns it holds are newer than the next session.
 */
import type { SessionInfo, SessionRange } from '../../store/types.ts';
import type { FollowStore } from './types.ts';

/** Sessions listed at a time. */
const SESSIONS_PER_READ = 256;

export async function sessionsByRecency(
  store: FollowStore,
  range: Omit<SessionRange, 'after' | 'limit'>,
  only?: string,
): Promise<SessionInfo[]> {
  if (only !== undefined) return (await store.list({ from: only, limit: 1 })).filter((s) => s.id === only);
  const out: SessionInfo[] = [];
  for (let after: string | undefined; ;) {
    const sessions = await store.list({ ...range, ...(after !== undefined && { after }), limit: SESSIONS_PER_READ });
    out.push(...sessions);
    after = sessions.at(-1)?.id;
    if (sessions.length < SESSIONS_PER_READ) break;
  }
  return out.sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
}
