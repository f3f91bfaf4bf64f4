-- The RedisEventStore's operations, one atomic script (see event_store.rs).
-- KEYS[1] the session's meta hash, KEYS[2] its finished-stream list,
-- KEYS[3] the stream's Redis Stream (or the meta hash again), KEYS[4..7]
-- the store-wide keys: sessions (zset sid -> expiry ms), sbytes (hash sid
-- -> bytes), bytes (total), budget (stream of appends, oldest first).
-- On the cluster layout only KEYS[1..3] are given (one hash slot, the
-- session's): the store-wide bounds are not kept (WIDE is false).
-- The meta hash's fields: hw (the highest stream number opened, -1 for
-- none), bytes (the bytes the session retains), streams (how many it
-- has), and per stream N, s:N:last (its last sequence number), s:N:ev
-- (evicted up to), s:N:bytes, s:N:n (events retained), s:N:fin, s:N:read
-- (ended, read to its end).
-- ARGV: prefix, op, sid, ttl_ms, then the op's arguments.
-- Numbers are passed to Redis as strings where the script has them so:
-- Redis formats a Lua number argument with printf's %.17g, a measurable
-- share of the script's time (docs/PERFORMANCE.md, session 32).
local P, op, sid, TTL = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local ttl = tonumber(TTL)
local SESS, SBYTES, TOTAL, BUDGET = KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local WIDE = #KEYS >= 7
-- Redis's clock in ms, read once and only by the ops that need it (the
-- TTL index and its pruning): a replay has no use for it.
local now_ms
local function now()
  if not now_ms then
    local t = redis.call('TIME')
    now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return now_ms
end

local function k(s, suffix) return P .. ':{' .. s .. '}:' .. suffix end
local function int(x) return string.format('%d', x) end
local function num(v) return tonumber(v or '0') or 0 end
local function hnum(key, field) return num(redis.call('HGET', key, field)) end

-- A replay, which is also tail_after's poll: one HMGET (which tells that
-- the session exists: its hw is always set) and the XRANGE; the read mark
-- written only once. Answered here, before the writing ops' functions are
-- defined: it needs none of them, and defining them is ~1 µs a call
-- (docs/PERFORMANCE.md, session 33).
if op == 'replay' then
  local meta, n, skey = KEYS[1], ARGV[5], KEYS[3]
  local f = 's:' .. n .. ':'
  local q = tonumber(ARGV[6])
  local v = redis.call('HMGET', meta, f .. 'last', f .. 'ev', f .. 'fin', f .. 'read', 'hw')
  if not v[5] then return {'unknown_event_id'} end
  local last = v[1]
  if not last then
    local hw = num(v[5])
    if hw >= 0 and tonumber(n) <= hw then return {'expired'} end
    return {'unknown_event_id'}
  end
  last = tonumber(last)
  if q > last then return {'unknown_event_id'} end
  if q < num(v[2]) then return {'expired'} end
  local out = {'ok', last, num(v[3])}
  -- Read to its end after it finished: evicted before unread ones.
  if out[3] == 1 and num(v[4]) ~= 1 then redis.call('HSET', meta, f .. 'read', '1') end
  if q == last then return out end
  local evs = redis.call('XRANGE', skey, '0-' .. int(q + 1), '+')
  -- Fewer than issued: the stream's key expired under us.
  if #evs ~= last - q then return {'expired'} end
  for i, e in ipairs(evs) do out[3 + i] = e[2][2] end
  return out
end

-- Syncs session s's byte count (`bytes` when the caller knows it) into
-- the store-wide total; the new total when it changed, else nil.
local function account(s, bytes)
  if not WIDE then return end
  local new = bytes or hnum(k(s, 'meta'), 'bytes')
  local old = num(redis.call('HGET', SBYTES, s))
  if new == old then return end
  redis.call('HSET', SBYTES, s, int(new))
  return redis.call('INCRBY', TOTAL, int(new - old))
end

-- Refreshes the TTL of session s's keys (a written stream's own key is
-- refreshed by its writer).
local function touch(s)
  redis.call('PEXPIRE', k(s, 'meta'), TTL)
  redis.call('PEXPIRE', k(s, 'fin'), TTL)
  if WIDE then redis.call('ZADD', SESS, int(now() + ttl), s) end
end

-- Deletes stream n of session s (its fields and its key), leaving the
-- session's counts (bytes, streams) to the caller.
local function forget_stream(s, n)
  local f = 's:' .. n .. ':'
  redis.call('HDEL', k(s, 'meta'), f .. 'last', f .. 'ev', f .. 'bytes', f .. 'n', f .. 'fin',
    f .. 'read')
  redis.call('DEL', k(s, 's:' .. n))
end

-- Drops stream n of session s whole, its counts included; the bytes it
-- held.
local function drop_stream(s, n)
  local meta = k(s, 'meta')
  local c = redis.call('HMGET', meta, 's:' .. n .. ':bytes', 'bytes', 'streams')
  local b = num(c[1])
  redis.call('HSET', meta, 'bytes', int(num(c[2]) - b), 'streams', int(num(c[3]) - 1))
  forget_stream(s, n)
  return b
end

-- The finished stream of session s the bounds evict next (taken off its
-- finished list), and the bytes it holds: the longest-finished one a
-- replay has read to its end, else the longest-finished one; false when
-- none has finished. (As MemoryEventStore's take_victim: an unread
-- finished stream is most likely an answer whose connection is about to
-- read it.)
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
      local c = redis.call('HMGET', meta, 's:' .. v .. ':read', 's:' .. v .. ':bytes')
      if num(c[1]) == 1 then
        redis.call('LREM', finkey, 1, v)
        return v, num(c[2])
      end
    end
    if #page < VICTIM_PAGE then break end
    from = from + VICTIM_PAGE
  end
  local v = redis.call('LPOP', finkey)
  if not v then return false end
  return v, hnum(meta, 's:' .. v .. ':bytes')
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
  for _, s in ipairs(redis.call('ZRANGEBYSCORE', SESS, '-inf', int(now()), 'LIMIT', 0, 100)) do
    remove(s)
  end
end

local meta, fin = KEYS[1], KEYS[2]

if op == 'open_session' then
  prune()
  if redis.call('EXISTS', meta) == 1 then return {'session_exists'} end
  if WIDE and redis.call('ZCARD', SESS) >= tonumber(ARGV[5]) then return {'too_many_sessions'} end
  redis.call('HSET', meta, 'hw', -1, 'bytes', 0, 'streams', 0)
  touch(sid)
  account(sid)
  return {'ok'}
end

if op == 'remove_session' then
  remove(sid)
  return {'ok'}
end

local n = ARGV[5]
local f = 's:' .. n .. ':'
local skey = KEYS[3]

-- What the writing ops read of stream n and of the session, in one HMGET
-- (docs/PERFORMANCE.md, session 32: a redis.call costs the script about
-- as much again as the command itself). `last` is false when the stream
-- does not exist, `session` when the session does not (`hw` is always
-- set).
local function state()
  local v = redis.call('HMGET', meta, f .. 'last', f .. 'fin', f .. 'bytes', f .. 'n',
    'bytes', 'streams', 'hw')
  return {last = v[1], fin = num(v[2]), sb = num(v[3]), sn = num(v[4]),
    tb = num(v[5]), streams = num(v[6]), hw = num(v[7]), session = v[7]}
end

local WRITES = {open_stream = true, append = true, append_final = true,
  append_final_read = true, open_final = true}
local st
if WRITES[op] then
  st = state()
  if not st.session then return {'unknown_session'} end
elseif op ~= 'replay' and redis.call('EXISTS', meta) == 0 then
  return {'unknown_session'}
end

-- Opens stream n, at most max_streams to a session (the op 'open_stream',
-- and the first step of 'open_final'), updating st; its reply. `later`:
-- the caller writes the stream's fields (st.pending), refreshes the
-- session's keys and syncs its bytes itself.
local function open_stream(st, max_streams, later)
  if st.last then return {'stream_exists'} end
  local evicted = false
  if st.streams >= max_streams then
    local victim, vb = take_victim(sid)
    if not victim then return {'too_many_streams'} end
    -- Its counts go into the HSET below, with the new stream's.
    forget_stream(sid, victim)
    st.tb, st.streams, evicted = st.tb - vb, st.streams - 1, true
  end
  st.last, st.fin, st.sb, st.sn, st.streams = '0', 0, 0, 0, st.streams + 1
  local fields = {f .. 'last', '0', f .. 'ev', '0', f .. 'bytes', '0', f .. 'n', '0',
    f .. 'fin', '0', 'streams', int(st.streams)}
  if evicted then
    fields[#fields + 1] = 'bytes'
    fields[#fields + 1] = int(st.tb)
  end
  if st.hw < 0 or tonumber(n) > st.hw then
    st.hw = tonumber(n)
    fields[#fields + 1] = 'hw'
    fields[#fields + 1] = n
  end
  if later then
    st.pending = fields
    return {'ok'}
  end
  redis.call('HSET', meta, unpack(fields))
  touch(sid)
  account(sid, st.tb)
  return {'ok'}
end

if op == 'open_stream' then return open_stream(st, tonumber(ARGV[6])) end

-- Appends ARGV[6] to stream n as st says it is (the op 'append'); its
-- reply. `final` (a list of fields, maybe empty): the append also ends
-- the stream (fin, and these fields set in the same HSET), which goes on
-- the session's finished list after the evictions the append makes, as
-- 'finish_stream' after 'append' would. Fields an open left pending are
-- written with the append's, unless the append is refused.
local function append(st, final)
  if not st.last then return {'unknown_stream'} end
  if st.fin == 1 then return {'stream_finished'} end
  local data = ARGV[6]
  local size = string.len(data)
  local max_events, max_bs = tonumber(ARGV[7]), tonumber(ARGV[8])
  local max_sess, max_total, cap = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
  if size > max_bs then return {'message_too_large', size} end
  local seq = tonumber(st.last) + 1
  if seq >= 9007199254740992 then return {'sequence_exhausted'} end
  redis.call('XADD', skey, '0-' .. int(seq), 'd', data)
  local sb, sn, tb = st.sb + size, st.sn + 1, st.tb + size
  local fields = st.pending or {}
  st.pending = nil
  for _, v in ipairs({f .. 'last', int(seq), f .. 'bytes', int(sb), f .. 'n', int(sn),
      'bytes', int(tb)}) do
    fields[#fields + 1] = v
  end
  if final then
    fields[#fields + 1] = f .. 'fin'
    fields[#fields + 1] = '1'
    for _, v in ipairs(final) do fields[#fields + 1] = v end
  end
  redis.call('HSET', meta, unpack(fields))
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
  -- Pushed before the TTLs are refreshed: the push may create the list.
  if final then redis.call('RPUSH', fin, n) end
  redis.call('PEXPIRE', skey, TTL)
  touch(sid)
  local total = account(sid, tb)
  -- The store-wide budget: the oldest appends of the whole store go first.
  if not WIDE then return {'ok', seq} end
  redis.call('XADD', BUDGET, '*', 's', sid, 'n', n, 'q', int(seq))
  while (total or num(redis.call('GET', TOTAL))) > max_total
      or redis.call('XLEN', BUDGET) > cap do
    total = nil
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

-- Marks stream n ended (the op 'finish_stream'); its reply.
local function finish_stream()
  if redis.call('HEXISTS', meta, f .. 'last') == 0 then return {'unknown_stream'} end
  if hnum(meta, f .. 'fin') == 0 then
    redis.call('HSET', meta, f .. 'fin', 1)
    redis.call('RPUSH', fin, n)
  end
  touch(sid)
  return {'ok'}
end

if op == 'append' then return append(st) end
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
-- fails. An append that succeeds ends the stream itself (in the HSET it
-- makes anyway); a refused one is followed by 'finish_stream'.
if op == 'append_final' or op == 'append_final_read' or op == 'open_final' then
  if op == 'open_final' then
    local o = open_stream(st, tonumber(ARGV[12]), true)
    if o[1] ~= 'ok' then return o end
  end
  local read = op ~= 'append_final'
  local a = append(st, read and {f .. 'read', '1'} or {})
  local ended = 'ok'
  if a[1] ~= 'ok' then
    -- The open's fields and bytes (a victim may have gone) are written
    -- here.
    if st.pending then
      redis.call('HSET', meta, unpack(st.pending))
      account(sid, st.tb)
    end
    ended = finish_stream()[1]
    if ended == 'ok' and read then redis.call('HSET', meta, f .. 'read', 1) end
  end
  local out = {ended}
  for i, v in ipairs(a) do out[i + 1] = v end
  return out
end

if op == 'last_seq' then
  local last = redis.call('HGET', meta, f .. 'last')
  if not last then return {'unknown_stream'} end
  return {'ok', tonumber(last)}
end

return redis.error_reply('unknown op ' .. op)
