/**
 * The Redis engine's scripts (redis-engine.ts has the key layout). Each runs alone, so a commit is one atomic step:
 * every condition is checked before anything is written. ARGV[1] is the key prefix (`<keyPrefix>rec:`),
 * ARGV[2] the store's clock (epoch ms): every script first drops the records whose `expiresAt` came (`purge`), with
 * their index entries, so no index or count answers one; the keys are named inside (no Redis Cluster).
 * Byte order of ids (a query's cursor) is compared byte by byte, never with Lua's locale-dependent `<`.
 */

const PURGE = `
local p, now = ARGV[1], tonumber(ARGV[2])
local function unindex(m)
  local key = p .. 'r:' .. m
  local ix = redis.call('HGET', key, 'ix')
  if ix then
    local id = string.sub(m, string.find(m, ':', 1, true) + 1)
    for _, z in ipairs(cjson.decode(ix)) do redis.call('ZREM', p .. z, id) end
  end
  redis.call('DEL', key)
  redis.call('ZREM', p .. 'x', m)
end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', p .. 'x', '-inf', now)) do unindex(m) end
`;

/**
 * ARGV[3]: the writes as JSON `[{k, id, ns, op ('p'|'d'), iv?, ix?: [[index, group, score]], x?}]` (scores and
 * expiry as strings, exact), ARGV[4…]: the puts' values in order. Returns 1 when applied, 0 when a condition failed
 * (nothing written).
 */
export const COMMIT = `${PURGE}
local writes = cjson.decode(ARGV[3])
local versions = {}
for i, w in ipairs(writes) do
  local v = tonumber(redis.call('HGET', p .. 'r:' .. w.k, 'v') or '0')
  if w.iv and w.iv ~= v then return 0 end
  versions[i] = v + 1
end
local value = 4
for i, w in ipairs(writes) do
  unindex(w.k)
  if w.op == 'p' then
    local key, zs = p .. 'r:' .. w.k, {}
    for _, e in ipairs(w.ix or {}) do
      local z = 'i:' .. w.ns .. ':' .. e[1] .. ':' .. e[2]
      zs[#zs + 1] = z
      redis.call('ZADD', p .. z, e[3], w.id)
    end
    redis.call('HSET', key, 'val', ARGV[value], 'v', versions[i], 'ix', #zs > 0 and cjson.encode(zs) or '[]')
    value = value + 1
    if w.x then
      redis.call('HSET', key, 'x', w.x)
      redis.call('PEXPIREAT', key, w.x)
      redis.call('ZADD', p .. 'x', w.x, w.k)
    end
  end
end
return 1`;

/**
 * A page of an index group: ARGV[3]: the group's key (after the prefix), ARGV[4]: the records' key start
 * (`r:<ns>:`), ARGV[5], ARGV[6]: min and max ('-inf', '+inf'), ARGV[7]: '1' for descending, ARGV[8], ARGV[9]: the
 * cursor's score and id (ARGV[8] '' for none), ARGV[10]: limit ('' for all). Returns id, version, value for each
 * record; an entry whose record is gone (expired by Redis's own clock) is removed and skipped.
 */
export const QUERY = `${PURGE}
local z, rec, reverse = p .. ARGV[3], p .. ARGV[4], ARGV[7] == '1'
local min, max, limit = ARGV[5], ARGV[6], tonumber(ARGV[10])
local cursor, cid = tonumber(ARGV[8]), ARGV[9]
local function before(a, b)
  if a == b then return false end
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
if cursor then
  if reverse then
    if cursor < tonumber(max) then max = ARGV[8] end
  elseif cursor > tonumber(min) then min = ARGV[8] end
end
local out, found, offset = {}, 0, 0
local chunk = limit and (limit + 16) or nil
while true do
  local page
  if reverse then
    page = chunk and redis.call('ZREVRANGEBYSCORE', z, max, min, 'WITHSCORES', 'LIMIT', offset, chunk)
      or redis.call('ZREVRANGEBYSCORE', z, max, min, 'WITHSCORES')
  else
    page = chunk and redis.call('ZRANGEBYSCORE', z, min, max, 'WITHSCORES', 'LIMIT', offset, chunk)
      or redis.call('ZRANGEBYSCORE', z, min, max, 'WITHSCORES')
  end
  for i = 1, #page, 2 do
    local id, score = page[i], tonumber(page[i + 1])
    local passed = not cursor or (reverse and (score < cursor or (score == cursor and before(id, cid))))
      or (not reverse and (score > cursor or (score == cursor and before(cid, id))))
    if passed and (not limit or found < limit) then
      local f = redis.call('HMGET', rec .. id, 'v', 'val')
      if f[2] then
        out[#out + 1] = id
        out[#out + 1] = f[1]
        out[#out + 1] = f[2]
        found = found + 1
      else
        redis.call('ZREM', z, id)
        offset = offset - 1
      end
    end
  end
  if not chunk or #page < 2 * chunk or found >= limit then break end
  offset = offset + chunk
end
return out`;

/** A group's size: ARGV[3] its key (after the prefix). */
export const COUNT = `${PURGE}
return redis.call('ZCARD', p .. ARGV[3])`;

/** Deletes KEYS[1] when it holds ARGV[1] (a lease's owner): a release never ends a lease someone else took since. */
export const RELEASE_IF_OWNER = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;
