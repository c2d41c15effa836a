-- leave: ARGV owner. An attempt that stops waiting gives up its place in the queue, and a grant
-- a release handed it that it never returned (docs/redis.md, "Hand-off"), and wakes the next
-- waiter, whom it may have kept waiting. Returns 0 if it had neither; else the notice published
-- (see release), or 1 if nobody else waits.
local owner = ARGV[1]
local holders, waiters = load(true, owner)
if not holders then
  return waiters
end
local h = holders[owner]
if not waiters[owner] and not h then
  expire(holders, waiters)
  return 0
end
if waiters[owner] then
  waiters[owner] = nil
  redis.call('HDEL', lock, 'w:' .. owner)
end
if h then
  holders[owner] = nil
  redis.call('HDEL', lock, h.field)
end
expire(holders, waiters)
return wake(waiters) or 1
