/**
 * Reading the Redis store's kept turn totals (redis-turn-counts.ts), and the one-time backfill of the sessions stored
 * before they were kept.
 * - TOTAL answers an owner's total (or every session's) in O(1) when every session is counted: the counts hash holds
 *   as many keys as the sessions hash; otherwise it answers -1.
 * - Then `backfillTurnTotals` counts what is missing, a batch of `BATCH` sessions per script (Redis is never held
 *   longer than their turn indexes take: a session whose index lags is indexed first, its log read once), and takes out
 *   the counts of sessions gone (deleted by an instance that kept none). Each step is idempotent, so instances may run
 *   it at once; it is logged with how many sessions it counted and how long it took.
 */
import type { Logger } from '../log/index.ts';
import { TAG_OF } from './redis-recency.ts';
import { KEEP_TURNS } from './redis-turn-counts.ts';
import { ENSURE_INDEX } from './redis-turns.ts';

const BATCH = 100;

/**
 * KEYS: turn counts, turn totals, sessions hash. ARGV: the owner's tag (`*`: every session). Returns `{ complete,
 * total }`: `complete` 1 when every session is counted.
 */
const TOTAL = `
local complete = redis.call('HLEN', KEYS[1]) == redis.call('HLEN', KEYS[3]) and 1 or 0
return { complete, tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0') }`;

/** The shortest time between two backfills by one store (while writers that keep no counts go on writing). */
const BACKFILL_EVERY_MS = 60_000;

/**
 * Counts the sessions ARGV names that are stored and not counted. KEYS: turn counts, turn totals, sessions hash, then
 * per session its stream, turns and turn order. Returns how many it counted.
 */
const COUNT_SESSIONS = `${TAG_OF}${ENSURE_INDEX}${KEEP_TURNS('KEYS[1]', 'KEYS[2]')}
local counted = 0
for i = 1, #ARGV do
  local key, at = ARGV[i], 3 + 3 * (i - 1)
  if redis.call('HEXISTS', KEYS[1], key) == 0 and redis.call('HEXISTS', KEYS[3], key) == 1 then
    ensureIndex(KEYS[at + 1], KEYS[at + 2], KEYS[at + 3])
    setTurns(key, redis.call('ZCARD', KEYS[at + 3]))
    counted = counted + 1
  end
end
return counted`;

/** Takes out the counts of the sessions ARGV names that are not stored. KEYS: COUNT_SESSIONS' first three. */
const UNCOUNT_GONE = `${TAG_OF}${KEEP_TURNS('KEYS[1]', 'KEYS[2]')}
for i = 1, #ARGV do
  if redis.call('HEXISTS', KEYS[3], ARGV[i]) == 0 then uncount(ARGV[i]) end
end
return 0`;

export interface TotalsDeps {
  /** HSCAN: one page of a hash's fields from `cursor`, and the next cursor ('0': done). */
  client: { hScan(hash: string, cursor: string): Promise<{ cursor: string; entries: { field: string }[] }> };
  run(script: string, keys: string[], args: string[]): Promise<unknown>;
  /** The hashes (turn counts, turn totals, sessions), and a session's stream, turns and turn order keys. */
  keys: { counts: string; totals: string; sessions: string; turnKeys: (id: string) => string[] };
  log: Logger;
}

/** Every field of `hash`, a page at a time, each page handed to `each`. */
async function scanAll(deps: TotalsDeps, hash: string, each: (fields: string[]) => Promise<void>): Promise<void> {
  for (let cursor = '0'; ;) {
    const page = await deps.client.hScan(hash, cursor);
    const fields = page.entries.map((e) => String(e.field));
    for (let i = 0; i < fields.length; i += BATCH) await each(fields.slice(i, i + BATCH));
    if (String(page.cursor) === '0') return;
    cursor = String(page.cursor);
  }
}

/** Counts the sessions stored without a kept count and drops the counts of sessions gone (see above). */
async function backfillTurnTotals(deps: TotalsDeps): Promise<void> {
  const started = performance.now();
  const { counts, totals, sessions, turnKeys } = deps.keys;
  let counted = 0;
  await scanAll(deps, sessions, async (ids) => {
    const keys = [counts, totals, sessions, ...ids.flatMap((id) => turnKeys(id))];
    counted += Number(await deps.run(COUNT_SESSIONS, keys, ids));
  });
  await scanAll(deps, counts, async (ids) => void (await deps.run(UNCOUNT_GONE, [counts, totals, sessions], ids)));
  deps.log.info(
    { sessions: counted, ms: Math.round(performance.now() - started) },
    'redis store: counted the turns of sessions stored without a kept count (once)',
  );
}

/**
 * `EventStore.turnTotal` over Redis: TOTAL, and when some session is not counted, a backfill first (one at a time,
 * at most one per `BACKFILL_EVERY_MS`; a call meanwhile answers the total kept so far).
 */
export function keptTurnTotals(deps: TotalsDeps): (tag: string) => Promise<number> {
  let running: Promise<void> | undefined;
  let last = Number.NEGATIVE_INFINITY;
  const ask = async (tag: string) => {
    const { counts, totals, sessions } = deps.keys;
    const [complete, total] = (await deps.run(TOTAL, [counts, totals, sessions], [tag])) as number[];
    return { complete: complete === 1, total: Number(total) };
  };
  return async (tag) => {
    const first = await ask(tag);
    if (first.complete) return first.total;
    if (!running && performance.now() - last >= BACKFILL_EVERY_MS) {
      last = performance.now();
      running = backfillTurnTotals(deps).finally(() => (running = undefined));
    }
    if (!running) return first.total;
    await running;
    return (await ask(tag)).total;
  };
}
