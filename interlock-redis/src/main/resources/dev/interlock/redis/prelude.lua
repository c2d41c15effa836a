-- Interlock redis: backend, shared part of every script (see docs/redis.md).
-- KEYS[1] is the lock hash, KEYS[2] the fence counter of the same lock: both carry the same
-- {hash tag}, so they live in one cluster slot. Every time is the server's (TIME), never a client's.
--
-- The lock hash holds one field per holder and per queued waiter:
--   h:<owner>  ->  "<mode> <token> <deadline ms> <lease ms> <since ms>"
--   w:<owner>  ->  "<mode> <deadline ms> <since ms>"
-- where mode is EX or SH for a lock, P<N> for one permit of a semaphore of N (docs/semaphores.md).
-- and expires (PEXPIRE) with the latest deadline in it. The fence counter has no TTL.
if redis.replicate_commands then
  pcall(redis.replicate_commands)
end
local lock, fence = KEYS[1], KEYS[2]
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local now_us = tonumber(clock[1]) * 1000000 + tonumber(clock[2])

-- A request whose client has stopped waiting for its answer must change nothing when the
-- server runs it late (it was paused, or overloaded): a grant or a renewal nobody receives would
-- hold the lock for a whole lease. deadline: the latest server time (ms) at which the client
-- still waits, '' for none (ServerDeadlines.java).
local function too_late(deadline)
  local d = tonumber(deadline or '')
  return d ~= nil and now > d
end

-- Integers up to 2^53 as exact decimal text (tostring would print 1.7e+15).
local function num(x)
  return string.format('%.0f', x)
end
