-- release: ARGV owner, token ('' to match any token of that owner: breaking a lock), and the
-- owner's loss channel ('' for none): a break tells the holder's process there at once.
-- Compare-and-delete: removes only this owner's grant; wakes the waiters. Returns 1 if removed.
local owner, token, lost = ARGV[1], ARGV[2], ARGV[3]
local holders, waiters = load(true)
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
expire(holders, waiters)
wake(waiters)
if lost and lost ~= '' then
  redis.call('PUBLISH', lost, owner .. ' ' .. lock)
end
return 1
