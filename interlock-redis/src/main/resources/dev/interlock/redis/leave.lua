-- leave: ARGV owner. An attempt that stops waiting gives up its place in the queue (and wakes
-- the others, whom it may have kept waiting). Returns 1 if it had a place.
local owner = ARGV[1]
local holders, waiters = load(true)
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
wake(waiters)
return 1
