#!lua flags=allow-key-locking
--[[
setRateLimit: Makes the queue's workers wait `ms` before leasing again (BullMQ's Queue.rateLimit and
Worker.rateLimit): the limiter counter set out of reach, expiring after `ms`. With `ms` 0 it deletes
the limiter instead (BullMQ's Queue.removeRateLimitKey), ending a manual limit and the limiter's count.

KEYS
  limiter  {P}limiter
ARGV
  ms  int  how long no job may start (ms); 0 to delete the limiter
REPLY set  limiting
  ok  "OK"
REPLY removed  deleting
  count  int  1 deleted, 0 there was none
EVENTS
  none
]]
if ARGV[ARG.ms] == "0" then return redis.call("DEL", KEYS[KEY.limiter]) end
return redis.call("SET", KEYS[KEY.limiter], "9007199254740991", "PX", ARGV[ARG.ms])
