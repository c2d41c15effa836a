-- release: ARGV owner, token ('' to match any token of that owner: breaking a lock), the
-- owner's loss channel ('' for none): a break tells the holder's process there at once; then the
-- deadline of a hand-off (prelude: too_late; a release run after it frees the lock but hands it to
-- nobody, since the client no longer waits for the answer that would pass the grant on), and
-- owner id and lease ms of each writer or permit waiter of the caller's process that waits for
-- this lock, if any. Compare-and-delete: removes only this owner's grant; hands the lock (or the
-- freed permit) to the next waiter if it is one of those (library: hand), else wakes it. Returns 0
-- if there was no such grant; when removed, {'H', owner, token} when handed, the notice published
-- (the owner id woken, or '*'), or 1 if nobody waits; for a permit whose release woke a waiter,
-- {'F', fence value, notice}.
local owner, token, lost = ARGV[1], ARGV[2], ARGV[3]
-- The owner's live grant is the only entry: delete the hash, nobody to wake. Anything else (a
-- dead or damaged entry, a wrong type, others in the hash) takes the full path below.
local only = redis.pcall('HGET', lock, 'h:' .. owner)
if type(only) == 'string' and redis.call('HLEN', lock) == 1 then
  local tok, dl = string.match(only, '^%u%w* (%d+) (%d+) %d+ %d+$')
  if tok and tonumber(dl) > now and (token == '' or tok == token) then
    redis.call('DEL', lock)
    if lost and lost ~= '' then
      redis.call('PUBLISH', lost, owner .. ' ' .. lock)
    end
    return 1
  end
end
--@library
local holders, waiters = load(true, owner)
if not holders then
  return waiters
end
local h = holders[owner]
if not h or (token ~= '' and h.token ~= token) then
  expire(holders, waiters)
  return 0
end
holders[owner] = nil
redis.call('HDEL', lock, h.field)
local handed = nil
if not too_late(ARGV[4]) then
  handed = hand(holders, waiters, 5)
end
expire(holders, waiters)
if lost and lost ~= '' then
  redis.call('PUBLISH', lost, owner .. ' ' .. lock)
end
if handed then
  return handed
end
local woke = wake(waiters)
if woke and string.sub(h.mode, 1, 1) == 'P' then
  -- A permit freed while others wait: the fence value now is what a try of the releasing process
  -- must still find to take a permit back ahead of them (bounded barging, acquire.lua). pcall: the
  -- release is done, a damaged fence must not fail it (acquire reports that one).
  local f = redis.pcall('GET', fence)
  if type(f) == 'string' then
    return { 'F', f, woke }
  end
end
return woke or 1
