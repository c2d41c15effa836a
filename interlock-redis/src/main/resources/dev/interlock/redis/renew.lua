-- renew: ARGV owner, token, lease ms, deadline (prelude: too_late; past it: the error
-- 'INTERLOCK-LATE <now>', nothing extended). Compare-and-expire: extends only this owner's live grant.
-- Returns {'R', now} when renewed, {'L', now, field, value, ...} (the holders now) when it is gone.
local owner, token, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])
if not lease or lease < 1 then
  return redis.error_reply('ERR interlock renew: bad arguments')
end
if too_late(ARGV[4]) then
  return redis.error_reply('INTERLOCK-LATE ' .. num(now))
end
local holders, waiters = load(true, owner)
if not holders then
  return waiters
end
local h = holders[owner]
if not h or h.token ~= token then
  expire(holders, waiters)
  local all = load(false) -- who holds it now, readers included
  return append({ 'L', num(now) }, all or holders, 16)
end
h.deadline = now + lease
h.value = holder_value(h.mode, h.token, h.deadline, lease, h.since)
redis.call('HSET', lock, h.field, h.value)
expire(holders, waiters)
return { 'R', num(now) }
