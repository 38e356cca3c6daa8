/**
 * The Redis store's scripts: a script runs alone, so each write is one step. KEYS of APPEND, CREATE and DELETE:
 * stream, index, last, ordered index, turns, turn order, recent, recent by owner (redis-recency.ts), turn counts,
 * turn totals (redis-turn-counts.ts): the store's `keysOf`.
 */
import { PLACE_RECENT } from './redis-recency.ts';
import { KEEP_TURNS } from './redis-turn-counts.ts';
import { APPEND_INDEX_START } from './redis-turns.ts';
import { compareKeys } from './session-range.ts';
import type { SessionRange } from './types.ts';

const TURN_COUNTS = KEEP_TURNS('KEYS[9]', 'KEYS[10]');

/**
 * Appends a batch with entry ids `0-<seq>` continuing the stream (gap-free), and updates the index (`<lastSeq> <ts>`),
 * the sorted index (a new session's key), `last` (type → seq of its latest event), the turn index (redis-turns.ts),
 * the index by recency (redis-recency.ts) and the kept turn counts (the turns new to the index; a session whose index
 * lags is left uncounted). ARGV: sessionId, ts, n, type…(n), turn…(n; '' for none), json…(n), fence, the store
 * identity held, the writer's tail (each '' for none). KEYS: `keysOf`'s, the session's fencing token (src/redis
 * `sessionFenceKey`), the store-id key. Returns the last seq; nothing is written and it returns -2 when the store-id
 * key does not hold the identity given (the store lost data, issue 84), -3 - last when the stream ends below the tail
 * given (it went back), -1 when a fence is given that is not the session's latest token.
 */
export const APPEND = `${PLACE_RECENT}${TURN_COUNTS}
local count = tonumber(ARGV[3])
local fence, held, tail = ARGV[4 + 3 * count], ARGV[5 + 3 * count], ARGV[6 + 3 * count]
if held ~= '' and redis.call('GET', KEYS[12]) ~= held then return -2 end
local last = 0
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if top[1] then last = tonumber(string.sub(top[1][1], 3)) end
if tail ~= '' and last < tonumber(tail) then return -3 - last end
if fence ~= '' and redis.call('GET', KEYS[11]) ~= fence then return -1 end
if not top[1] then redis.call('ZADD', KEYS[4], 0, ARGV[1]) end
${APPEND_INDEX_START}
local kept = redis.call('HEXISTS', KEYS[9], ARGV[1]) == 1
if kept and not (indexed and top[1]) then uncount(ARGV[1]); kept = false end
local n, added = tonumber(ARGV[3]), 0
local seqs = {}
for i = 1, n do
  last = last + 1
  redis.call('XADD', KEYS[1], '0-' .. last, 'ts', ARGV[2], 'e', ARGV[3 + 2 * n + i])
  seqs[#seqs + 1] = ARGV[3 + i]
  seqs[#seqs + 1] = last
  if indexed and indexTurn(ARGV[3 + n + i], last) then added = added + 1 end
end
redis.call('HSET', KEYS[3], unpack(seqs))
if indexed then
  redis.call('HSET', KEYS[5], '', last)
  if kept then addTurns(ARGV[1], added) else setTurns(ARGV[1], redis.call('ZCARD', KEYS[6])) end
end
placeRecent(ARGV[1], redis.call('HGET', KEYS[2], ARGV[1]), ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], last .. ' ' .. ARGV[2])
return last`;

/**
 * Writes a whole log into a session that has no stream (else returns -1), each entry with its own seq and `ts`, and
 * indexes it as APPEND does. The seqs were checked to ascend before, so no XADD is refused and it never stops
 * halfway. ARGV: sessionId, then seq, ts, type, turn, json per event.
 */
export const CREATE = `${PLACE_RECENT}${TURN_COUNTS}
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
uncount(ARGV[1])
redis.call('DEL', KEYS[3])
redis.call('ZADD', KEYS[4], 0, ARGV[1])
local top, last = {}, 0
${APPEND_INDEX_START}
local ts = ''
for i = 2, #ARGV, 5 do
  redis.call('XADD', KEYS[1], '0-' .. ARGV[i], 'ts', ARGV[i + 1], 'e', ARGV[i + 4])
  redis.call('HSET', KEYS[3], ARGV[i + 2], ARGV[i])
  indexTurn(ARGV[i + 3], ARGV[i])
  last, ts = ARGV[i], ARGV[i + 1]
end
redis.call('HSET', KEYS[5], '', last)
setTurns(ARGV[1], redis.call('ZCARD', KEYS[6]))
placeRecent(ARGV[1], redis.call('HGET', KEYS[2], ARGV[1]), ts)
redis.call('HSET', KEYS[2], ARGV[1], last .. ' ' .. ts)
return tonumber(last)`;

/**
 * Deletes a session's stream, `last`, turn index, fencing token (KEYS[11]: a later lease's token comes from Redis'
 * clock, still greater), index entries and kept turn count; returns how many streams went (0 or 1).
 */
export const DELETE = `${PLACE_RECENT}${TURN_COUNTS}
local n = redis.call('DEL', KEYS[1])
placeRecent(ARGV[1], redis.call('HGET', KEYS[2], ARGV[1]), nil)
uncount(ARGV[1])
redis.call('DEL', KEYS[3], KEYS[5], KEYS[6], KEYS[11])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return n`;

/**
 * A page of the sessions in key order (sorted index, every score 0, so by bytes) between two lex bounds, at most
 * `limit` (none: ''), each key followed by its index entry. The sorted index is rebuilt from the hash when their sizes
 * differ (written by an instance that kept none); a key it holds without an index entry is dropped and the page filled
 * from further on. KEYS: ordered index, index. ARGV: min, max, limit.
 */
export const PAGE = `
if redis.call('ZCARD', KEYS[1]) ~= redis.call('HLEN', KEYS[2]) then
  redis.call('DEL', KEYS[1])
  local all = redis.call('HKEYS', KEYS[2])
  for i = 1, #all, 500 do
    local batch = {}
    for j = i, math.min(i + 499, #all) do
      batch[#batch + 1] = 0
      batch[#batch + 1] = all[j]
    end
    redis.call('ZADD', KEYS[1], unpack(batch))
  end
end
local limit = tonumber(ARGV[3])
local out, found, min = {}, 0, ARGV[1]
while true do
  local want = limit and (limit - found)
  if want == 0 then break end
  local keys
  if want then
    keys = redis.call('ZRANGEBYLEX', KEYS[1], min, ARGV[2], 'LIMIT', 0, want)
  else
    keys = redis.call('ZRANGEBYLEX', KEYS[1], min, ARGV[2])
  end
  if #keys == 0 then break end
  local stale = false
  for i = 1, #keys, 500 do
    local batch = {}
    for j = i, math.min(i + 499, #keys) do batch[#batch + 1] = keys[j] end
    local values = redis.call('HMGET', KEYS[2], unpack(batch))
    for j = 1, #batch do
      if values[j] then
        out[#out + 1] = batch[j]
        out[#out + 1] = values[j]
        found = found + 1
      else
        redis.call('ZREM', KEYS[1], batch[j])
        stale = true
      end
    end
  end
  if not stale or not want or #keys < want then break end
  min = '(' .. keys[#keys]
end
return out`;

/** ZRANGEBYLEX bounds of a range: the tighter of `after` (exclusive) and `from` (inclusive), and `below`. */
export function lexBounds(range: SessionRange): [string, string] {
  const { after, from, below } = range;
  const min =
    after !== undefined && (from === undefined || compareKeys(after, from) >= 0)
      ? `(${after}`
      : from !== undefined
        ? `[${from}`
        : '-';
  return [min, below !== undefined ? `(${below}` : '+'];
}
