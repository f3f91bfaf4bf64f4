-- The RedisEventStore's operations, one atomic script (see event_store.rs).
-- KEYS[1] the session's meta hash, KEYS[2] its finished-stream list,
-- KEYS[3] the stream's Redis Stream (or the meta hash again), KEYS[4..7]
-- the store-wide keys: sessions (zset sid -> expiry ms), sbytes (hash sid
-- -> bytes), bytes (total), budget (stream of appends, oldest first).
-- On the cluster layout only KEYS[1..3] are given (one hash slot, the
-- session's): the store-wide bounds are not kept (WIDE is false).
-- ARGV: prefix, op, sid, ttl_ms, then the op's arguments.
local P, op, sid, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local SESS, SBYTES, TOTAL, BUDGET = KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local WIDE = #KEYS >= 7
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function k(s, suffix) return P .. ':{' .. s .. '}:' .. suffix end
local function int(x) return string.format('%d', x) end
local function num(v) return tonumber(v or '0') or 0 end
local function hnum(key, field) return num(redis.call('HGET', key, field)) end

-- Syncs session s's byte count into the store-wide total.
local function account(s)
  if not WIDE then return end
  local new = hnum(k(s, 'meta'), 'bytes')
  local old = num(redis.call('HGET', SBYTES, s))
  if new ~= old then redis.call('INCRBY', TOTAL, new - old) end
  redis.call('HSET', SBYTES, s, new)
end

-- Refreshes the TTL of session s's keys (a written stream's own key is
-- refreshed by its writer).
local function touch(s)
  redis.call('PEXPIRE', k(s, 'meta'), ttl)
  redis.call('PEXPIRE', k(s, 'fin'), ttl)
  if WIDE then redis.call('ZADD', SESS, now + ttl, s) end
end

-- Drops stream n of session s whole.
local function drop_stream(s, n)
  local meta, f = k(s, 'meta'), 's:' .. n .. ':'
  redis.call('HINCRBY', meta, 'bytes', 0 - hnum(meta, f .. 'bytes'))
  redis.call('HINCRBY', meta, 'events', 0 - hnum(meta, f .. 'n'))
  redis.call('HINCRBY', meta, 'streams', -1)
  redis.call('HDEL', meta, f .. 'last', f .. 'ev', f .. 'bytes', f .. 'n', f .. 'fin', f .. 'read')
  redis.call('DEL', k(s, 's:' .. n))
end

-- The finished stream of session s the bounds evict next (taken off its
-- finished list): the longest-finished one a replay has read to its end,
-- else the longest-finished one; false when none has finished. (As
-- MemoryEventStore's take_victim: an unread finished stream is most likely
-- an answer whose connection is about to read it.)
-- The list is read a page at a time: the one wanted is usually first
-- (streams are marked read as they are answered), and reading the whole
-- list of a session at its stream cap (256 by default) on every new stream
-- was the costliest command of a request's scripts (docs/PERFORMANCE.md,
-- session 31).
local VICTIM_PAGE = 16
local function take_victim(s)
  local meta, finkey = k(s, 'meta'), k(s, 'fin')
  local from = 0
  while true do
    local page = redis.call('LRANGE', finkey, from, from + VICTIM_PAGE - 1)
    for _, v in ipairs(page) do
      if hnum(meta, 's:' .. v .. ':read') == 1 then
        redis.call('LREM', finkey, 1, v)
        return v
      end
    end
    if #page < VICTIM_PAGE then break end
    from = from + VICTIM_PAGE
  end
  return redis.call('LPOP', finkey)
end

-- Evicts the oldest retained event of stream n of session s; false when
-- nothing is retained.
local function evict_front(s, n)
  local meta, f = k(s, 'meta'), 's:' .. n .. ':'
  if hnum(meta, f .. 'n') <= 0 then return false end
  local skey = k(s, 's:' .. n)
  local e = redis.call('XRANGE', skey, '-', '+', 'COUNT', 1)
  if #e == 0 then
    -- The stream's key expired: nothing of it is retained any more.
    redis.call('HINCRBY', meta, 'bytes', 0 - hnum(meta, f .. 'bytes'))
    redis.call('HINCRBY', meta, 'events', 0 - hnum(meta, f .. 'n'))
    redis.call('HSET', meta, f .. 'bytes', 0, f .. 'n', 0, f .. 'ev', hnum(meta, f .. 'last'))
    return true
  end
  local size = string.len(e[1][2][2])
  local seq = tonumber(string.match(e[1][1], '%-(%d+)$'))
  redis.call('XDEL', skey, e[1][1])
  redis.call('HINCRBY', meta, f .. 'bytes', 0 - size)
  redis.call('HINCRBY', meta, f .. 'n', -1)
  redis.call('HSET', meta, f .. 'ev', int(seq))
  redis.call('HINCRBY', meta, 'bytes', 0 - size)
  redis.call('HINCRBY', meta, 'events', -1)
  return true
end

-- Removes session s and everything stored for it.
local function remove(s)
  local meta = k(s, 'meta')
  for _, f in ipairs(redis.call('HKEYS', meta)) do
    local n = string.match(f, '^s:(%d+):last$')
    if n then redis.call('DEL', k(s, 's:' .. n)) end
  end
  redis.call('DEL', meta, k(s, 'fin'))
  if not WIDE then return end
  local old = num(redis.call('HGET', SBYTES, s))
  if old ~= 0 then redis.call('INCRBY', TOTAL, -old) end
  redis.call('HDEL', SBYTES, s)
  redis.call('ZREM', SESS, s)
end

-- Forgets sessions whose keys have expired (at most 100 per call).
local function prune()
  if not WIDE then return end
  for _, s in ipairs(redis.call('ZRANGEBYSCORE', SESS, '-inf', now, 'LIMIT', 0, 100)) do
    remove(s)
  end
end

local meta, fin = KEYS[1], KEYS[2]

if op == 'open_session' then
  prune()
  if redis.call('EXISTS', meta) == 1 then return {'session_exists'} end
  if WIDE and redis.call('ZCARD', SESS) >= tonumber(ARGV[5]) then return {'too_many_sessions'} end
  redis.call('HSET', meta, 'hw', -1, 'bytes', 0, 'events', 0, 'streams', 0)
  touch(sid)
  account(sid)
  return {'ok'}
end

if op == 'remove_session' then
  remove(sid)
  return {'ok'}
end

if redis.call('EXISTS', meta) == 0 then
  if op == 'replay' then return {'unknown_event_id'} end
  return {'unknown_session'}
end

local n = ARGV[5]
local f = 's:' .. n .. ':'
local skey = KEYS[3]

-- Opens stream n, at most max_streams to a session (the op 'open_stream',
-- and the first step of 'open_final'); its reply.
local function open_stream(max_streams)
  if redis.call('HEXISTS', meta, f .. 'last') == 1 then return {'stream_exists'} end
  if hnum(meta, 'streams') >= max_streams then
    local victim = take_victim(sid)
    if not victim then return {'too_many_streams'} end
    drop_stream(sid, victim)
  end
  redis.call('HSET', meta, f .. 'last', 0, f .. 'ev', 0, f .. 'bytes', 0, f .. 'n', 0, f .. 'fin', 0)
  redis.call('HINCRBY', meta, 'streams', 1)
  local hw = hnum(meta, 'hw')
  if hw < 0 or tonumber(n) > hw then redis.call('HSET', meta, 'hw', n) end
  touch(sid)
  account(sid)
  return {'ok'}
end

if op == 'open_stream' then return open_stream(tonumber(ARGV[6])) end

-- Appends ARGV[6] to stream n (the op 'append'); its reply.
local function append()
  local last = redis.call('HGET', meta, f .. 'last')
  if not last then return {'unknown_stream'} end
  if hnum(meta, f .. 'fin') == 1 then return {'stream_finished'} end
  local data = ARGV[6]
  local size = string.len(data)
  local max_events, max_bs = tonumber(ARGV[7]), tonumber(ARGV[8])
  local max_sess, max_total, cap = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
  if size > max_bs then return {'message_too_large', size} end
  local seq = tonumber(last) + 1
  if seq >= 9007199254740992 then return {'sequence_exhausted'} end
  redis.call('XADD', skey, '0-' .. int(seq), 'd', data)
  redis.call('HSET', meta, f .. 'last', int(seq))
  -- The counts as HINCRBY leaves them: read again only after an eviction.
  local sb = redis.call('HINCRBY', meta, f .. 'bytes', size)
  local sn = redis.call('HINCRBY', meta, f .. 'n', 1)
  local tb = redis.call('HINCRBY', meta, 'bytes', size)
  redis.call('HINCRBY', meta, 'events', 1)
  -- Per-stream bounds: the oldest events go.
  while sn > max_events or sb > max_bs do
    if not evict_front(sid, n) then break end
    sn, sb = hnum(meta, f .. 'n'), hnum(meta, f .. 'bytes')
    tb = hnum(meta, 'bytes')
  end
  -- Per-session bound: finished streams first, then this stream's oldest.
  while tb > max_sess do
    local victim = take_victim(sid)
    if victim then
      drop_stream(sid, victim)
    elseif not evict_front(sid, n) then
      break
    end
    tb = hnum(meta, 'bytes')
  end
  redis.call('PEXPIRE', skey, ttl)
  touch(sid)
  account(sid)
  -- The store-wide budget: the oldest appends of the whole store go first.
  if not WIDE then return {'ok', seq} end
  redis.call('XADD', BUDGET, '*', 's', sid, 'n', n, 'q', int(seq))
  while num(redis.call('GET', TOTAL)) > max_total or redis.call('XLEN', BUDGET) > cap do
    local e = redis.call('XRANGE', BUDGET, '-', '+', 'COUNT', 1)
    if #e == 0 then break end
    redis.call('XDEL', BUDGET, e[1][1])
    local fl = e[1][2]
    local s2, n2, q2 = fl[2], fl[4], tonumber(fl[6])
    local m2, f2 = k(s2, 'meta'), 's:' .. fl[4] .. ':'
    if redis.call('HEXISTS', m2, f2 .. 'last') == 1 then
      while hnum(m2, f2 .. 'ev') < q2 do
        if not evict_front(s2, n2) then break end
      end
      account(s2)
    end
  end
  return {'ok', seq}
end

-- Marks stream n ended (the op 'finish_stream'); its reply. `touched`:
-- the session's keys were just refreshed (by append, in append_final).
local function finish_stream(touched)
  if redis.call('HEXISTS', meta, f .. 'last') == 0 then return {'unknown_stream'} end
  if hnum(meta, f .. 'fin') == 0 then
    redis.call('HSET', meta, f .. 'fin', 1)
    redis.call('RPUSH', fin, n)
  end
  if not touched then touch(sid) end
  return {'ok'}
end

if op == 'append' then return append() end
if op == 'finish_stream' then return finish_stream() end

-- Both, in one call: the final response of a request's stream and the
-- stream's end (EventStore::append_final). The stream is ended even when
-- the append is refused, as finish_stream after a failed append ends it.
-- Reply: the end's status, then the append's reply. 'append_final_read'
-- (EventStore::append_final_delivered) also marks the ended stream read to
-- its end, as a replay of its end would (see take_victim): its writer
-- hands the message to the attached connection itself.
-- 'open_final' (EventStore::open_answered): open_stream (at most ARGV[12]
-- streams), then 'append_final_read'; the open's reply alone when it
-- fails.
if op == 'open_final' then
  local o = open_stream(tonumber(ARGV[12]))
  if o[1] ~= 'ok' then return o end
end

if op == 'append_final' or op == 'append_final_read' or op == 'open_final' then
  local a = append()
  local fin = finish_stream(a[1] == 'ok')[1]
  if fin == 'ok' and op ~= 'append_final' then
    redis.call('HSET', meta, f .. 'read', 1)
  end
  local out = {fin}
  for i, v in ipairs(a) do out[i + 1] = v end
  return out
end

if op == 'last_seq' then
  local last = redis.call('HGET', meta, f .. 'last')
  if not last then return {'unknown_stream'} end
  return {'ok', tonumber(last)}
end

if op == 'replay' then
  local q = tonumber(ARGV[6])
  local last = redis.call('HGET', meta, f .. 'last')
  if not last then
    local hw = hnum(meta, 'hw')
    if hw >= 0 and tonumber(n) <= hw then return {'expired'} end
    return {'unknown_event_id'}
  end
  last = tonumber(last)
  if q > last then return {'unknown_event_id'} end
  if q < hnum(meta, f .. 'ev') then return {'expired'} end
  local out = {'ok', last, hnum(meta, f .. 'fin')}
  -- Read to its end after it finished: evicted before unread ones.
  if out[3] == 1 then redis.call('HSET', meta, f .. 'read', 1) end
  if q == last then return out end
  local evs = redis.call('XRANGE', skey, '0-' .. int(q + 1), '+')
  -- Fewer than issued: the stream's key expired under us.
  if #evs ~= last - q then return {'expired'} end
  for i, e in ipairs(evs) do out[3 + i] = e[2][2] end
  return out
end

return redis.error_reply('unknown op ' .. op)
