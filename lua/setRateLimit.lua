--[[
setRateLimit: Makes the queue's workers wait `ms` before leasing again (BullMQ's Queue.rateLimit and
Worker.rateLimit): the limiter counter set out of reach, expiring after `ms`.

KEYS
  limiter  {P}limiter
ARGV
  ms  how long no job may start (ms)
REPLY
  ok  "OK"
EVENTS
  none
]]
return redis.call("SET", KEYS[KEY.limiter], "9007199254740991", "PX", ARGV[ARG.ms])
