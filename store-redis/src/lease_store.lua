-- The RedisLeaseStore's operations, one atomic script (see lease_store.rs).
-- KEYS[1] the lease's hash: h (holder), d (data), u (held until, ms on
-- Redis's own clock). ARGV: op, holder, ttl ms, keep ms, data.
-- The key lives `ttl + keep` past each write, so a lapsed lease stays
-- readable (with its data, for a successor) long after it lapsed.
local key, op, holder = KEYS[1], ARGV[1], ARGV[2]
local ttl, keep = tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function hold(h)
  redis.call('HSET', key, 'h', h, 'u', now + ttl)
  redis.call('PEXPIRE', key, ttl + keep)
end

if op == 'acquire' then
  if redis.call('EXISTS', key) == 1 then return 0 end
  redis.call('HSET', key, 'd', ARGV[5])
  hold(holder)
  return 1
end
if op == 'renew' then
  if redis.call('HGET', key, 'h') ~= holder then return 0 end
  hold(holder)
  return 1
end
if op == 'release' then
  if redis.call('HGET', key, 'h') ~= holder then return 0 end
  redis.call('DEL', key)
  return 1
end
if op == 'get' or op == 'take_over' then
  local v = redis.call('HMGET', key, 'h', 'd', 'u')
  if not v[1] then return {} end
  local held = tonumber(v[3]) > now
  if op == 'take_over' then
    if held then return {} end
    hold(holder)
  end
  return {v[1], v[2], held and 1 or 0}
end
return redis.error_reply('unknown lease op ' .. tostring(op))
