-- leave: ARGV owner. An attempt that stops waiting gives up its place in the queue (and wakes
-- the next waiter, whom it may have kept waiting). Returns 0 if it had no place; else the notice
-- published (see release), or 1 if nobody else waits.
local owner = ARGV[1]
local holders, waiters = load(true, owner)
if not holders then
  return waiters
end
if not waiters[owner] then
  expire(holders, waiters)
  return 0
end
waiters[owner] = nil
redis.call('HDEL', lock, 'w:' .. owner)
expire(holders, waiters)
return wake(waiters) or 1
