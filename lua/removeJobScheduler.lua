--[[
removeJobScheduler: Removes a job scheduler as BullMQ 6.7.0 does: its pending iteration if that is still
delayed (an iteration already waiting or running is left to finish, and makes no next one), its
`repeat` ZSET entry and its hash.

KEYS
  schedulers  {P}repeat
  delayed  {P}delayed
  events  {P}events
ARGV
  prefix  string  the queue key prefix {P}
  schedulerId  string  the scheduler id
REPLY
  removed  int  1 removed, 0 no such scheduler
EVENTS
  removed {jobId, prev: delayed} for a removed iteration.
GLOBAL LOCK
  Its pending iteration's job id is made from the scheduler's score in {P}repeat, read inside, and
  that job's keys with it.
]]
-- @include removeJobKeys
local id = ARGV[ARG.schedulerId]
local millis = redis.call("ZSCORE", KEYS[KEY.schedulers], id)
if millis then
  local jobId = "repeat:" .. id .. ":" .. millis
  if redis.call("ZREM", KEYS[KEY.delayed], jobId) == 1 then
    removeJobKeys(ARGV[ARG.prefix] .. jobId)
    redis.call("XADD", KEYS[KEY.events], "*", "event", "removed", "jobId", jobId, "prev", "delayed")
  end
end
if redis.call("ZREM", KEYS[KEY.schedulers], id) == 0 then return 0 end
redis.call("DEL", KEYS[KEY.schedulers] .. ":" .. id)
return 1
