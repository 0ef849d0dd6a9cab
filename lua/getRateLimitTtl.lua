#!lua flags=allow-key-locking
--[[
getRateLimitTtl: How long the queue's rate limit still holds workers back, as BullMQ's
Queue.getRateLimitTtl(maxJobs): with a max (given, else meta.max), the limiter's TTL once its count
has reached that max (0 otherwise; a limiter that has just expired is deleted); with none, the
limiter's PTTL as is (-2 no limiter, -1 no expiry).
Not flagged no-writes: it deletes a limiter whose time ran out, as BullMQ does.

KEYS
  limiter  {P}limiter
  meta  {P}meta
ARGV
  maxJobs  int  the max to compare the count with, "0" for meta.max or none
REPLY ttl
  ttl  int  the TTL in ms, or 0 (see above)
REPLY unset  no max: the limiter's PTTL answers a code
  code  code
CODES
  noExpiry  -1  the limiter has no expiry
  noLimiter  -2  there is no limiter
EVENTS
  none
]]
local maxJobs = tonumber(ARGV[ARG.maxJobs])
if maxJobs == 0 then maxJobs = tonumber(redis.call("HGET", KEYS[KEY.meta], "max")) end
if not maxJobs then return redis.call("PTTL", KEYS[KEY.limiter]) end
if maxJobs > (tonumber(redis.call("GET", KEYS[KEY.limiter])) or 0) then return 0 end
local ttl = redis.call("PTTL", KEYS[KEY.limiter])
if ttl == 0 then redis.call("DEL", KEYS[KEY.limiter]) end
return ttl > 0 and ttl or 0
