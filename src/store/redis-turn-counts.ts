/**
 * The Redis store's kept turn totals (`EventStore.turnTotal`), as Lua the writing scripts include:
 * - `<prefix>turn-counts` (a hash: session key → its number of turns) holds the sessions counted, `<prefix>turn-totals`
 *   (a hash: owner tag, as `tagOf` gives it → the sum of its sessions' counts; `*` → every session's) their sums.
 * - APPEND adds the turns its batch begins (those new to the session's turn index) in the script that writes them;
 *   CREATE counts the log it writes, DELETE takes the session's count out. A session is counted only while its turn
 *   index is current: APPEND uncounts one whose index lags (an instance without indexes wrote), a read that brings
 *   the index up to date counts it again, and the backfill (redis-turn-totals.ts) counts the sessions stored before
 *   the counts were kept.
 * `tagOf` (redis-recency.ts `TAG_OF`) comes before it in every script.
 */

/** Lua: `addTurns(key, n)`, `setTurns(key, n)` (an uncounted session), `uncount(key)`, `recount(key, n)`. */
export const KEEP_TURNS = (counts: string, totals: string) => `
local function shiftTotals(key, n)
  if n == 0 then return end
  redis.call('HINCRBY', ${totals}, tagOf(key), n)
  redis.call('HINCRBY', ${totals}, '*', n)
end
local function addTurns(key, n)
  if n == 0 then return end
  redis.call('HINCRBY', ${counts}, key, n)
  shiftTotals(key, n)
end
local function setTurns(key, n)
  redis.call('HSET', ${counts}, key, n)
  shiftTotals(key, n)
end
local function uncount(key)
  local n = redis.call('HGET', ${counts}, key)
  if not n then return end
  redis.call('HDEL', ${counts}, key)
  shiftTotals(key, -tonumber(n))
end
local function recount(key, n)
  local was = redis.call('HGET', ${counts}, key)
  if not was then return end
  redis.call('HSET', ${counts}, key, n)
  shiftTotals(key, n - tonumber(was))
end`;
