/**
 * The Redis store's turn index: per session, `{s:<id>}:turns` (a hash: turn id → `<firstSeq> <lastSeq>`, and the
 * field `''` → the last seq indexed) and `{s:<id>}:turn-order` (the turn ids scored by their first seq).
 * Appends keep a current index current (a new stream starts indexed); a read first indexes what its index lacks
 * (`ENSURE`: a stream an instance without indexes wrote), reading turn ids from the entries' JSON, and counts the
 * session's turns again if they are kept (redis-turn-counts.ts).
 */
import { TAG_OF } from './redis-recency.ts';
import { KEEP_TURNS } from './redis-turn-counts.ts';

/**
 * Lua: `indexTurnIn(turns, order, turn, seq)` records the event `seq` of `turn` ('': none) in the `turns` hash and
 * `order` set; true when the turn is new there.
 */
const INDEX_TURN_IN = `
local function indexTurnIn(turns, order, turn, seq)
  if turn == '' then return false end
  local span = redis.call('HGET', turns, turn)
  if span then
    redis.call('HSET', turns, turn, string.match(span, '^%d+') .. ' ' .. seq)
    return false
  end
  redis.call('HSET', turns, turn, seq .. ' ' .. seq)
  redis.call('ZADD', order, seq, turn)
  return true
end`;

/**
 * Lua: `ensureIndex(stream, turns, order)` brings the index of a stream up to date; true when it indexed anything
 * (a stream an instance without indexes wrote).
 */
export const ENSURE_INDEX = `${INDEX_TURN_IN}
local function ensureIndex(stream, turns, order)
  local top = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)
  if not top[1] then return false end
  local last = tonumber(string.sub(top[1][1], 3))
  local to = tonumber(redis.call('HGET', turns, '') or -1)
  if to == last then return false end
  if to < 0 or to > last then
    redis.call('DEL', turns, order)
    to = 0
  end
  for _, entry in ipairs(redis.call('XRANGE', stream, '(0-' .. to, '+')) do
    local fields = entry[2]
    for j = 1, #fields, 2 do
      if fields[j] == 'e' then
        local ok, ev = pcall(cjson.decode, fields[j + 1])
        if ok and type(ev) == 'table' and type(ev.turnId) == 'string' then
          indexTurnIn(turns, order, ev.turnId, tonumber(string.sub(entry[1], 3)))
        end
      end
    end
  end
  redis.call('HSET', turns, '', last)
  return true
end`;

/**
 * Lua for READ_TURN and TURNS. KEYS: stream, turns, order, then the kept turn counts and totals
 * (redis-turn-totals.ts). ARGV[3]: the session's key. A count kept for a stream whose index lagged is counted again.
 */
const ENSURE = `${TAG_OF}${ENSURE_INDEX}
${KEEP_TURNS('KEYS[4]', 'KEYS[5]')}
if ensureIndex(KEYS[1], KEYS[2], KEYS[3]) then recount(ARGV[3], redis.call('ZCARD', KEYS[3])) end
`;

/**
 * Lua for APPEND and CREATE (KEYS[5], KEYS[6]: the index), once the stream's last seq `last` is known: `indexed`
 * tells whether the index is current, and `indexTurn` records an event.
 */
export const APPEND_INDEX_START = `
if not top[1] then redis.call('DEL', KEYS[5], KEYS[6]); redis.call('HSET', KEYS[5], '', 0) end
local indexed = tonumber(redis.call('HGET', KEYS[5], '') or -1) == last
${INDEX_TURN_IN}
local function indexTurn(turn, seq) return indexTurnIn(KEYS[5], KEYS[6], turn, seq) end`;

/** Lua: the entries of turn ARGV[1] with seq > ARGV[2], within its span. KEYS, ARGV[3]: `ENSURE`'s. */
export const READ_TURN = `${ENSURE}
local span = redis.call('HGET', KEYS[2], ARGV[1])
if not span then return {} end
local first, last = string.match(span, '^(%d+) (%d+)$')
local from = math.max(tonumber(first), tonumber(ARGV[2]) + 1)
return redis.call('XRANGE', KEYS[1], '0-' .. from, '0-' .. last)`;

/** Lua: the turns whose first seq is after ARGV[1], at most ARGV[2] ('': all), as { ids, spans }. KEYS, ARGV[3]: `ENSURE`'s. */
export const TURNS = `${ENSURE}
local ids
if ARGV[2] == '' then
  ids = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. ARGV[1], '+inf')
else
  ids = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. ARGV[1], '+inf', 'LIMIT', 0, ARGV[2])
end
local spans = {}
for i = 1, #ids, 500 do
  local batch = {}
  for j = i, math.min(i + 499, #ids) do batch[#batch + 1] = ids[j] end
  for _, span in ipairs(redis.call('HMGET', KEYS[2], unpack(batch))) do spans[#spans + 1] = span end
end
return { ids, spans }`;

/** The entries an XRANGE inside a script answers: `[id, [field, value, ...]]` each, as messages. */
export function entriesOf(reply: unknown): { id: string; message: Record<string, string> }[] {
  if (!Array.isArray(reply)) return [];
  return reply.flatMap((entry: unknown) => {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !Array.isArray(entry[1])) return [];
    const fields = entry[1] as unknown[];
    const message: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) message[String(fields[i])] = String(fields[i + 1]);
    return [{ id: entry[0], message }];
  });
}

/** The spans the TURNS script answers. */
export function spansOf(reply: unknown): { turnId: string; firstSeq: number; lastSeq: number }[] {
  const [ids, spans] = Array.isArray(reply) ? (reply as unknown[][]) : [];
  return (ids ?? []).flatMap((id, i) => {
    const span = spans?.[i];
    const [first, last] = (typeof span === 'string' ? span : '').split(' ').map(Number);
    return typeof id === 'string' && Number.isSafeInteger(first) && Number.isSafeInteger(last)
      ? [{ turnId: id, firstSeq: first as number, lastSeq: last as number }]
      : [];
  });
}
