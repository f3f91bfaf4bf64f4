-- The RedisTaskStore's writes, one atomic script (see task_store.rs).
-- KEYS[1] the task's hash (v: version, j: the record's JSON), KEYS[2] the
-- store-wide zset of tasks (id -> expiry, ms since the epoch, caller's
-- clock), KEYS[3] the hash id -> bytes, KEYS[4] the total bytes.
-- On the cluster layout only KEYS[1] is given (one hash slot, the
-- task's): the count and total-bytes bounds are not kept (WIDE is false).
-- ARGV: prefix, op, id, then the op's arguments.
local P, op, id = ARGV[1], ARGV[2], ARGV[3]
local task, TASKS, TBYTES, TOTAL = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local WIDE = #KEYS >= 4

local function num(v) return tonumber(v or '0') or 0 end

local function remove(i)
  if not WIDE then return redis.call('DEL', task) end
  local old = num(redis.call('HGET', TBYTES, i))
  if old ~= 0 then redis.call('INCRBY', TOTAL, -old) end
  redis.call('HDEL', TBYTES, i)
  redis.call('ZREM', TASKS, i)
  redis.call('DEL', P .. ':task:{' .. i .. '}')
end

local function purge(now)
  if not WIDE then return 0 end
  local gone = redis.call('ZRANGEBYSCORE', TASKS, '-inf', now)
  for _, i in ipairs(gone) do remove(i) end
  return #gone
end

-- Sets the key's lifetime: ARGV value 0 means no expiry.
local function expire(ms)
  if tonumber(ms) > 0 then redis.call('PEXPIRE', task, ms) else redis.call('PERSIST', task) end
end

if op == 'purge' then
  return {'ok', purge(ARGV[4])}
end

if op == 'remove' then
  remove(id)
  return {'ok'}
end

-- Whether a new task of `bytes` fits the total bound: the total is not
-- reached yet and the task does not take it past the bound.
local function room(bytes, max_total)
  local total = num(redis.call('GET', TOTAL))
  return total < max_total and total + bytes <= max_total
end

if op == 'create' then
  -- ARGV: json, bytes, max_tasks, expires_at ('+inf' for never), now,
  -- pexpire, max_total_bytes
  if redis.call('EXISTS', task) == 1 then return {'exists'} end
  if WIDE and redis.call('ZCARD', TASKS) >= tonumber(ARGV[6]) then
    purge(ARGV[8])
    if redis.call('ZCARD', TASKS) >= tonumber(ARGV[6]) then return {'too_many_tasks'} end
  end
  local bytes, max_total = tonumber(ARGV[5]), tonumber(ARGV[10])
  if WIDE and not room(bytes, max_total) then
    purge(ARGV[8])
    if not room(bytes, max_total) then return {'full'} end
  end
  redis.call('HSET', task, 'v', 1, 'j', ARGV[4])
  expire(ARGV[9])
  if not WIDE then return {'ok'} end
  redis.call('ZADD', TASKS, ARGV[7], id)
  redis.call('HSET', TBYTES, id, ARGV[5])
  redis.call('INCRBY', TOTAL, ARGV[5])
  return {'ok'}
end

if op == 'cas' then
  -- ARGV: expected version, json, bytes, max_task_bytes, max_total_bytes, pexpire
  local v = redis.call('HGET', task, 'v')
  if not v then return {'gone'} end
  if v ~= ARGV[4] then return {'retry'} end
  local size, max_task, max_total = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
  if not WIDE then
    if size > max_task then return {'too_large', size, max_task} end
    redis.call('HSET', task, 'v', tonumber(v) + 1, 'j', ARGV[5])
    expire(ARGV[9])
    return {'ok'}
  end
  local old = num(redis.call('HGET', TBYTES, id))
  local total = num(redis.call('GET', TOTAL)) - old + size
  if size > max_task then return {'too_large', size, max_task} end
  if size > old and total > max_total then return {'too_large', total, max_total} end
  redis.call('HSET', task, 'v', tonumber(v) + 1, 'j', ARGV[5])
  expire(ARGV[9])
  redis.call('HSET', TBYTES, id, size)
  if size ~= old then redis.call('INCRBY', TOTAL, size - old) end
  return {'ok'}
end

return redis.error_reply('unknown op ' .. op)
