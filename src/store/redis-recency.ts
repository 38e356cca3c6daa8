/**
 * The Redis store's sessions by update time (`EventStore.recent`): two sorted sets whose scores are all 0, so they
 * are ordered by their members' bytes.
 * - `<prefix>recent` holds every session as `<rank><key>`, `<prefix>recent-by-owner` as `<tag><rank><key>`: `rank`
 *   is the time of the session's last event, 32 bytes (NUL-padded) each turned to 255 minus itself, so the newest
 *   come first and, at one time, keys in byte (code point) order; `tag` is the key's `NUL owner NUL`, or `\1` for a
 *   key without an owner, so each owner's sessions are one range. Members never leave Redis (only keys do).
 * - APPEND, CREATE and DELETE move the session's members in the script that writes its log and its `sessions` hash
 *   entry (`placeRecent`), so the index changes with the log, atomically. Their sizes are kept by Redis: the count
 *   of a page is ZCARD (every session) or ZLEXCOUNT over the owner's range, not a scan.
 * - RECENT rebuilds both from the `sessions` hash when their sizes differ from it (an instance without the index
 *   wrote), drops a member whose session is gone and moves one whose time changed (the same).
 */

/** Lua: `tagOf(key)`, the key's owner as the index tags it (`NUL owner NUL`, or `\1` for a key without one). */
export const TAG_OF = `
local function tagOf(key)
  if string.byte(key, 1) == 0 then
    local e = string.find(key, '\\0', 2, true)
    if e then return string.sub(key, 1, e) end
  end
  return '\\1'
end`;

/** Lua: `placeRecent(key, old, ts)` moves a session from the time in its old hash entry (false: none) to `ts` (nil: out). */
const placeRecent = (recent: string, byOwner: string) => `${TAG_OF}
local function rankOf(ts)
  local b = {string.byte(ts, 1, 32)}
  for i = 1, 32 do b[i] = 255 - (b[i] or 0) end
  return string.char(unpack(b))
end
local function timeOf(value) return string.match(value, '^[^ ]* ([^ ]*)') or '' end
local function placeRecent(key, old, ts)
  if old and ts and timeOf(old) == ts then return end
  local tag = tagOf(key)
  if old then
    local rank = rankOf(timeOf(old))
    redis.call('ZREM', ${recent}, rank .. key)
    redis.call('ZREM', ${byOwner}, tag .. rank .. key)
  end
  if ts then
    local rank = rankOf(ts)
    redis.call('ZADD', ${recent}, 0, rank .. key)
    redis.call('ZADD', ${byOwner}, 0, tag .. rank .. key)
  end
end`;

/** `placeRecent` for APPEND, CREATE and DELETE (KEYS[7], KEYS[8]: the store's `keysOf`). */
export const PLACE_RECENT = placeRecent('KEYS[7]', 'KEYS[8]');

/**
 * A page by recency. KEYS: recent, recent-by-owner, sessions hash. ARGV: tag ('' for every session), the cursor's
 * time and key ('' for none), limit. Returns `{ total, { key, hash entry, … } }`.
 */
export const RECENT = `${placeRecent('KEYS[1]', 'KEYS[2]')}
local size = redis.call('HLEN', KEYS[3])
if redis.call('ZCARD', KEYS[1]) ~= size or redis.call('ZCARD', KEYS[2]) ~= size then
  redis.call('DEL', KEYS[1], KEYS[2])
  local all = redis.call('HGETALL', KEYS[3])
  for i = 1, #all, 2 do placeRecent(all[i], false, timeOf(all[i + 1])) end
end
local tag, limit = ARGV[1], tonumber(ARGV[4])
local set, skip, lo, hi = KEYS[2], #tag, '[' .. tag, '+'
if tag == '' then
  set, lo = KEYS[1], '-'
else
  hi = '(' .. string.sub(tag, 1, -2) .. string.char(string.byte(tag, -1) + 1)
end
if ARGV[3] ~= '' then lo = '(' .. tag .. rankOf(ARGV[2]) .. ARGV[3] end
local out, found = {}, 0
while found < limit do
  local want = limit - found
  local members = redis.call('ZRANGEBYLEX', set, lo, hi, 'LIMIT', 0, want)
  for _, m in ipairs(members) do
    local key, rank = string.sub(m, skip + 33), string.sub(m, skip + 1, skip + 32)
    local value = redis.call('HGET', KEYS[3], key)
    if value and rankOf(timeOf(value)) == rank then
      out[#out + 1] = key
      out[#out + 1] = value
      found = found + 1
    else
      redis.call('ZREM', KEYS[1], rank .. key)
      redis.call('ZREM', KEYS[2], tagOf(key) .. rank .. key)
      if value then placeRecent(key, false, timeOf(value)) end
    end
  end
  if #members < want then break end
  lo = '(' .. members[#members]
end
local total
if tag == '' then total = redis.call('ZCARD', KEYS[1]) else total = redis.call('ZLEXCOUNT', KEYS[2], '[' .. tag, hi) end
return {total, out}`;
