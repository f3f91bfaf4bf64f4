-- The per-scope task index of the RedisTaskStore (see task_store.rs): the
-- tasks one requestor created, in creation order, for tasks/list. Both keys
-- carry the scope as their hash tag, so every call touches one slot.
-- KEYS[1] zset id -> creation order, KEYS[2] zset id -> expiry (ms since the
-- epoch, caller's clock; +inf for an unlimited task).
-- ARGV: op, then the op's arguments.
local IDX, EXP = KEYS[1], KEYS[2]
local op = ARGV[1]

-- Drops the entries of tasks that have expired.
local function prune(now)
  local gone = redis.call('ZRANGEBYSCORE', EXP, '-inf', now)
  for _, i in ipairs(gone) do
    redis.call('ZREM', IDX, i)
    redis.call('ZREM', EXP, i)
  end
end

if op == 'add' then
  -- ARGV: id, max, expires_at ('+inf' for never), now, pexpire (0: none)
  local id, max, pexpire = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[6])
  prune(ARGV[5])
  if redis.call('ZSCORE', IDX, id) then return {'exists'} end
  if redis.call('ZCARD', IDX) >= max then return {'full'} end
  local existed = redis.call('EXISTS', IDX) == 1
  local left = redis.call('PTTL', IDX)
  local last = redis.call('ZRANGE', IDX, -1, -1, 'WITHSCORES')
  local seq = 1
  if #last == 2 then seq = tonumber(last[2]) + 1 end
  redis.call('ZADD', IDX, seq, id)
  redis.call('ZADD', EXP, ARGV[4], id)
  -- The index lives as long as its longest-lived task.
  if pexpire == 0 then
    redis.call('PERSIST', IDX)
    redis.call('PERSIST', EXP)
  elseif not existed or (left >= 0 and left < pexpire) then
    redis.call('PEXPIRE', IDX, pexpire)
    redis.call('PEXPIRE', EXP, pexpire)
  end
  return {'ok'}
end

if op == 'remove' then
  -- ARGV: id
  redis.call('ZREM', IDX, ARGV[2])
  redis.call('ZREM', EXP, ARGV[2])
  return {'ok'}
end

if op == 'page' then
  -- ARGV: '' for the first page or '>' followed by the cursor, count, now
  prune(ARGV[4])
  local from = '-inf'
  if ARGV[2] ~= '' then
    local score = redis.call('ZSCORE', IDX, string.sub(ARGV[2], 2))
    if not score then return {'unknown_cursor'} end
    from = '(' .. score
  end
  local ids = redis.call('ZRANGEBYSCORE', IDX, from, '+inf', 'LIMIT', 0, tonumber(ARGV[3]))
  table.insert(ids, 1, 'ok')
  return ids
end

return redis.error_reply('unknown op ' .. op)
