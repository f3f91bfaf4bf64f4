-- The RedisSessionStore's writes, one atomic script (see session_store.rs).
-- KEYS[1] the session's hash (j: the record's JSON without last-seen,
-- seen: last seen ms, idle: idle timeout ms), KEYS[2] the store-wide zset
-- id -> expiry (ms since the epoch, caller's clock).
-- On the cluster layout only KEYS[1] is given (one hash slot, the
-- session's): no index, so no count bound (WIDE is false).
-- ARGV: prefix, op, id, then the op's arguments.
local P, op, id = ARGV[1], ARGV[2], ARGV[3]
local sess, INDEX = KEYS[1], KEYS[2]
local WIDE = #KEYS >= 2

local function remove(i)
  if not WIDE then return redis.call('DEL', sess) end
  redis.call('ZREM', INDEX, i)
  return redis.call('DEL', P .. ':session:{' .. i .. '}')
end

local function purge(now)
  if not WIDE then return 0 end
  local gone = redis.call('ZRANGEBYSCORE', INDEX, '-inf', now)
  for _, i in ipairs(gone) do remove(i) end
  return #gone
end

if op == 'purge' then return {'ok', purge(ARGV[4])} end
if op == 'remove' then return {'ok', remove(id)} end

if op == 'create' then
  -- ARGV: json, max_sessions, now, idle, pexpire
  local now, idle = tonumber(ARGV[6]), tonumber(ARGV[7])
  local score
  if WIDE then
    score = redis.call('ZSCORE', INDEX, id)
  else
    -- No index: the record's own last-seen and idle timeout say it.
    local seen, idle = unpack(redis.call('HMGET', sess, 'seen', 'idle'))
    if seen then score = tonumber(seen) + tonumber(idle) end
  end
  if score and tonumber(score) > now then return {'exists'} end
  if score then remove(id) end
  if WIDE and redis.call('ZCARD', INDEX) >= tonumber(ARGV[5]) then
    purge(now)
    if redis.call('ZCARD', INDEX) >= tonumber(ARGV[5]) then return {'too_many_sessions'} end
  end
  redis.call('HSET', sess, 'j', ARGV[4], 'seen', ARGV[6], 'idle', ARGV[7])
  redis.call('PEXPIRE', sess, ARGV[8])
  if WIDE then redis.call('ZADD', INDEX, now + idle, id) end
  return {'ok'}
end

if op == 'touch' then
  -- ARGV: now, grace
  -- One read for the record and its times; numbers go to Redis as
  -- strings (Redis formats a Lua number with %.17g).
  local now, grace = tonumber(ARGV[4]), tonumber(ARGV[5])
  local seen, idle, j = unpack(redis.call('HMGET', sess, 'seen', 'idle', 'j'))
  if not seen then
    if WIDE then redis.call('ZREM', INDEX, id) end
    return {'not_found'}
  end
  seen, idle = tonumber(seen), tonumber(idle)
  if now >= seen + idle then
    remove(id)
    return {'expired'}
  end
  if now > seen then seen = now end
  local function int(x) return string.format('%d', x) end
  redis.call('HSET', sess, 'seen', int(seen))
  redis.call('PEXPIRE', sess, int(seen + idle - now + grace))
  if WIDE then redis.call('ZADD', INDEX, int(seen + idle), id) end
  return {'ok', j, seen}
end

return redis.error_reply('unknown op ' .. op)
