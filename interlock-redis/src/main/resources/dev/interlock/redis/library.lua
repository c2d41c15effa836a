-- Interlock redis: backend, the functions the scripts share (see docs/redis.md). A script's
-- body names where they go with a line '--@library' (after its short paths, so that a call that
-- takes one does not create them: Redis runs the whole script text at each call); without that
-- line they come right after the prelude.
-- Other readers' entries a light load left unread (see load); expire never shortens the TTL or
-- deletes the hash while there are any.
local unread = 0

-- The semaphore limit a mode states: 0 for a lock (EX, SH), N for a permit of N (P<N>), nil if
-- the text is no mode at all.
local function limit_of(m)
  if m == 'EX' or m == 'SH' then
    return 0
  end
  return tonumber(string.match(m, '^P([1-9]%d*)$') or '')
end

-- Reads the lock hash. Returns holders and waiters by owner, live ones only (deadline after now),
-- or nil and an error reply. With prune, expired entries are deleted.
-- A light load (light: the caller's owner id) leaves other owners' shared holds unread: a
-- reader's acquire, and a release, renewal or leave of one entry, need only the exclusive holder,
-- the queue and the caller's own entries, so their cost does not grow with the readers already
-- there. Dead readers it does not read are pruned by the next full load (a writer's acquire).
local function load(prune, light)
  local raw = redis.pcall('HGETALL', lock)
  if type(raw) == 'table' and raw.err then
    return nil, redis.error_reply('INTERLOCK-WRONGTYPE ' .. lock)
  end
  local holders, waiters, dead = {}, {}, {}
  for i = 1, #raw, 2 do
    local f, v = raw[i], raw[i + 1]
    local kind, owner = string.sub(f, 1, 2), string.sub(f, 3)
    local e
    if light and kind == 'h:' and owner ~= light and string.sub(v, 1, 3) == 'SH ' then
      unread = unread + 1
      kind = nil
    elseif kind == 'h:' then
      local m, tok, dl, ls, since = string.match(v, '^(%u%w*) (%d+) (%d+) (%d+) (%d+)$')
      if m and limit_of(m) then
        e = { field = f, value = v, mode = m, token = tok, deadline = tonumber(dl), lease = tonumber(ls), since = tonumber(since) }
      end
    elseif kind == 'w:' then
      local m, dl, since = string.match(v, '^(%u%w*) (%d+) (%d+)$')
      if m and limit_of(m) then
        e = { field = f, value = v, mode = m, deadline = tonumber(dl), since = tonumber(since) }
      end
    end
    if kind == nil then
      -- a shared hold a light load does not read
    elseif not e or owner == '' then
      return nil, redis.error_reply('INTERLOCK-DAMAGED ' .. lock)
    elseif e.deadline <= now then
      dead[#dead + 1] = f
    elseif kind == 'h:' then
      holders[owner] = e
    else
      waiters[owner] = e
    end
  end
  if prune then
    for i = 1, #dead do
      redis.call('HDEL', lock, dead[i])
    end
  end
  return holders, waiters
end

-- Sets the lock hash to expire with its latest deadline, or deletes it when nothing is left.
local function expire(holders, waiters)
  local last = 0
  for _, e in pairs(holders) do
    if e.deadline > last then last = e.deadline end
  end
  for _, e in pairs(waiters) do
    if e.deadline > last then last = e.deadline end
  end
  if unread > 0 then
    -- Readers left unread may outlive every entry read: only ever lengthen the TTL.
    local ttl = redis.call('PTTL', lock)
    if last > 0 and ttl >= 0 and now + ttl < last then
      redis.call('PEXPIRE', lock, last - now)
    end
  elseif last == 0 then
    redis.call('DEL', lock)
  else
    redis.call('PEXPIRE', lock, last - now)
  end
end

local function holder_value(mode, token, deadline, lease, since)
  return mode .. ' ' .. token .. ' ' .. num(deadline) .. ' ' .. num(lease) .. ' ' .. num(since)
end

-- Grants the lock to owner in mode for lease ms, after the fence value last: sets the fence to the
-- new token and adds the holder entry (to holders as well). The token never goes back: one more
-- than the last, and at least the server's time in microseconds, so that it keeps increasing even
-- if the counter is lost (a restart without persistence, a failover to a replica that missed the
-- last writes). Returns the entry.
local function grant(holders, owner, mode, lease, last)
  local token = num(math.max(last + 1, now_us))
  redis.call('SET', fence, token)
  local e = { field = 'h:' .. owner, mode = mode, token = token, deadline = now + lease, since = now }
  e.value = holder_value(mode, token, e.deadline, lease, now)
  holders[owner] = e
  redis.call('HSET', lock, e.field, e.value)
  return e
end

-- Appends field and value of each entry (at most max of them) to out.
local function append(out, entries, max)
  local n = 0
  for _, e in pairs(entries) do
    if n >= max then break end
    out[#out + 1] = e.field
    out[#out + 1] = e.value
    n = n + 1
  end
  return out
end

-- The waiter whose turn it is: the first in the queue (the earliest place, ties by owner, as
-- acquire orders them). Returns its entry and owner id, or nil.
local function first_waiter(waiters)
  local first, fo = nil, nil
  for o, w in pairs(waiters) do
    if not first or w.since < first.since or (w.since == first.since and o < fo) then
      first, fo = w, o
    end
  end
  return first, fo
end

-- Wakes the waiter whose turn it is (docs/redis.md, "Waiting") by publishing its owner id.
-- Every other queued waiter would only find that one still ahead of it, so waking them all would
-- cost a failed try each per release. A first waiter that is shared goes in together with the
-- readers queued behind it, and permit waiters may take several permits freed before the first
-- of them tries: then everyone is woken ('*'). Returns what it published (nil: nobody
-- waits), so that the caller can also wake a waiter of its own process at once.
local function wake(waiters)
  local first, fo = first_waiter(waiters)
  if first then
    local who = first.mode == 'EX' and fo or '*'
    redis.call('PUBLISH', lock .. ':wake', who)
    return who
  end
  return nil
end

-- Hands the lock, or the permit the release just freed, to the waiter whose turn it is, if it
-- waits in the caller's process: candidates are owner id and lease ms pairs in ARGV from index
-- 'from' on (docs/redis.md, "Hand-off"). Only the first in the queue, never one behind another
-- process's place. A writer only when nothing else holds the lock, not even a reader left unread;
-- a permit waiter only when the holders, all of its semaphore, leave exactly one permit free (with
-- more free, as when a holder's lease ran out, the release wakes everyone instead). The grant is
-- the one acquire would have made at the waiter's next try. Returns {'H', owner, token}, or nil.
local function hand(holders, waiters, from)
  if #ARGV < from + 1 or unread > 0 then
    return nil
  end
  local first, fo = first_waiter(waiters)
  if not first then
    return nil
  end
  local limit = limit_of(first.mode)
  if first.mode == 'EX' then
    if next(holders) ~= nil then
      return nil
    end
  elseif limit > 0 then
    local held = 0
    for _, h in pairs(holders) do
      if h.mode ~= first.mode then
        return nil -- another limit, or a lock: the waiter's own try answers that (acquire: 'M')
      end
      held = held + 1
    end
    if held ~= limit - 1 then
      return nil
    end
  else
    return nil -- a reader goes in with the readers queued behind it, woken together
  end
  local lease = nil
  for i = from, #ARGV - 1, 2 do
    if ARGV[i] == fo then
      lease = tonumber(ARGV[i + 1])
      break
    end
  end
  if not lease or lease < 1 then
    return nil
  end
  local fv = redis.pcall('GET', fence)
  local last = 0
  if type(fv) == 'table' then
    return nil -- a fence of the wrong type: the waiter's own try will report it
  elseif fv then
    last = tonumber(fv)
    if not last or last < 0 or last ~= math.floor(last) then
      return nil
    end
  end
  waiters[fo] = nil
  redis.call('HDEL', lock, first.field)
  return { 'H', fo, grant(holders, fo, first.mode, lease, last).token }
end
