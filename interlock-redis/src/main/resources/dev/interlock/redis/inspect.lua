-- inspect: no ARGV. Reads only. Returns {now, fence or '', field, value, ...} for the live entries.
local fv = redis.pcall('GET', fence)
if type(fv) == 'table' and fv.err then
  return redis.error_reply('INTERLOCK-WRONGTYPE ' .. fence)
end
local holders, waiters = load(false)
if not holders then
  return waiters
end
local out = { num(now), fv or '' }
append(out, holders, 100000)
append(out, waiters, 100000)
return out
