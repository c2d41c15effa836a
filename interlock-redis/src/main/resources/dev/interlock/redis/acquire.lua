-- acquire: ARGV owner, mode (EX|SH, or P<N> for one permit of a semaphore of N), lease ms, queue (1: this attempt waits), queue lease ms,
-- barge: '' or the fence value the caller's process left when it last released this lock, and
-- deadline (prelude: too_late), past which it answers the error 'INTERLOCK-LATE <now>' and does nothing.
-- Returns {'G', token, now} when granted ({'G', token, now, 'P'} when it passed queued waiters),
-- {'B', now, retry ms, field, value, ...} when busy (the entries that block it, at most 16;
-- retry: when the first of them runs out), {'M', limit} when the holders state another limit
-- than this request (0: a plain lock): a caller's mistake, nothing granted or queued.
local owner, mode, lease, queue, qlease = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4] == '1', tonumber(ARGV[5])
local barge = ARGV[6] or ''
local limit = 0
if mode ~= 'EX' and mode ~= 'SH' then
  limit = tonumber(string.match(mode, '^P([1-9]%d*)$') or '')
end
if not limit or not lease or lease < 1 or not qlease or qlease < 1 then
  return redis.error_reply('ERR interlock acquire: bad arguments')
end
if too_late(ARGV[7]) then
  return redis.error_reply('INTERLOCK-LATE ' .. num(now))
end
-- Reads come first, so a key of the wrong type fails the script before it writes anything.
local fv = redis.pcall('GET', fence)
if type(fv) == 'table' and fv.err then
  return redis.error_reply('INTERLOCK-WRONGTYPE ' .. fence)
end
local last = 0
if fv then
  last = tonumber(fv)
  if not last or last < 0 or last ~= math.floor(last) then
    return redis.error_reply('INTERLOCK-DAMAGED ' .. fence)
  end
end
-- Nobody holds or waits (no hash): granted without reading or weighing any entry.
if redis.call('EXISTS', lock) == 0 then
  local token, at = num(math.max(last + 1, now_us)), num(now)
  redis.call('SET', fence, token)
  redis.call('HSET', lock, 'h:' .. owner, mode .. ' ' .. token .. ' ' .. num(now + lease) .. ' ' .. num(lease) .. ' ' .. at)
  redis.call('PEXPIRE', lock, lease)
  return { 'G', token, at }
end
--@library
-- A reader need not read the other readers (library: load); a writer must.
local holders, waiters = load(true, mode == 'SH' and owner or nil)
if not holders then
  return waiters
end

local mine = holders[owner]
if mine then
  -- Already ours: a retry after a lost reply. Same grant, lease extended.
  mine.deadline = now + lease
  mine.value = holder_value(mine.mode, mine.token, mine.deadline, lease, mine.since)
  redis.call('HSET', lock, mine.field, mine.value)
  if waiters[owner] then
    waiters[owner] = nil
    redis.call('HDEL', lock, 'w:' .. owner)
  end
  expire(holders, waiters)
  return { 'G', mine.token, num(now) }
end

-- A name is a lock or a semaphore of one limit while held (docs/semaphores.md): a request that
-- disagrees with the holders is refused, not queued.
for _, h in pairs(holders) do
  if h.mode ~= mode and (limit > 0 or string.sub(h.mode, 1, 1) == 'P') then
    expire(holders, waiters)
    return { 'M', string.sub(h.mode, 1, 1) == 'P' and string.sub(h.mode, 2) or '0' }
  end
end

-- Conflicts: holders of a conflicting mode, and conflicting waiters queued before this one. An
-- attempt not yet queued comes after every queued waiter, so a waiting writer keeps new readers
-- out and a new writer lines up behind readers already waiting.
local me = waiters[owner]
local blocking, retry = {}, nil
local function block(e)
  blocking[#blocking + 1] = e
  local left = e.deadline - now
  if not retry or left < retry then retry = left end
end
local function ahead(o, w)
  return o ~= owner and (not me or w.since < me.since or (w.since == me.since and o < owner))
end
local passed = false
if limit > 0 then
  -- A permit: free if the holders and the waiters queued before this one leave one of the limit
  -- (so a permit that frees goes to the longest waiter, never to a newcomer), except for bounded
  -- barging as for a writer: a permit this process freed may be taken back ahead of the queue if
  -- one is free and the fence still bears the value the release saw (release.lua), so nobody has
  -- been granted a permit since.
  local held = 0
  for _ in pairs(holders) do held = held + 1 end
  local taken = held
  for o, w in pairs(waiters) do
    if ahead(o, w) then taken = taken + 1 end
  end
  if taken >= limit then
    if held < limit and barge ~= '' and barge == fv then
      passed = true
    else
      for _, h in pairs(holders) do block(h) end
      for o, w in pairs(waiters) do
        if ahead(o, w) then block(w) end
      end
    end
  end
else
  for _, h in pairs(holders) do
    if mode == 'EX' or h.mode == 'EX' then block(h) end
  end
  -- Bounded barging (docs/redis.md): a writer may pass the queue when the lock is free and still
  -- bears the fence value its own process's last release left, so nobody has had it since. The
  -- client counts how many times in a row, and stops sending the value at its limit.
  local bargeable = mode == 'EX' and #blocking == 0 and barge ~= '' and barge == fv
  for o, w in pairs(waiters) do
    if ahead(o, w) and (mode == 'EX' or w.mode == 'EX') then
      if bargeable then
        passed = true
      else
        block(w)
      end
    end
  end
end

if #blocking > 0 then
  if queue then
    -- A new place goes after every place already queued, even one taken in the same millisecond:
    -- the order (place, then owner id) must never put a newcomer ahead of a waiter that a release
    -- has already named as next, or both would wait for a notice that no release sends.
    local since = me and me.since or now
    if not me then
      for _, w in pairs(waiters) do
        if w.since >= since then since = w.since + 1 end
      end
    end
    local e = { field = 'w:' .. owner, mode = mode, deadline = now + qlease, since = since }
    e.value = mode .. ' ' .. num(e.deadline) .. ' ' .. num(since)
    waiters[owner] = e
    redis.call('HSET', lock, e.field, e.value)
    expire(holders, waiters)
  end
  return append({ 'B', num(now), num(retry) }, blocking, 16)
end

-- Granted (library: grant, which says why the token never goes back).
local token = grant(holders, owner, mode, lease, last).token
if me then
  waiters[owner] = nil
  redis.call('HDEL', lock, 'w:' .. owner)
end
expire(holders, waiters)
if passed then
  return { 'G', token, num(now), 'P' }
end
return { 'G', token, num(now) }
