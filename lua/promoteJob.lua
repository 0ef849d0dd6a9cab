--[[
promoteJob: Makes a delayed job ready now, as BullMQ's job.promote: out of delayed, into wait (LPUSH)
or prioritized (a fresh counter) with the marker unless the queue is paused or maxed, its `delay` set
to 0. Safe to replay: a replayed call that had promoted the job answers 0 again.

KEYS
  replayGuard  nimbusq's replay guard for this call
  jobKey  {P}<jobId>
  delayed  {P}delayed
  wait  {P}wait
  prioritized  {P}prioritized
  priorityCounter  {P}pc
  meta  {P}meta
  active  {P}active
  marker  {P}marker
  events  {P}events
ARGV
  jobId  the job id
  guardTtl  how long the replay guard lives (ms)
RETURNS
  0 promoted, -1 no such job, -3 the job is not delayed (nothing is written then).
EVENTS
  waiting {jobId, prev: delayed}
]]
-- @include isQueuePausedOrMaxed
local jobKey, jobId = KEYS[KEY.jobKey], ARGV[ARG.jobId]
local previous = redis.call("SET", KEYS[KEY.replayGuard], "0", "NX", "GET", "PX", ARGV[ARG.guardTtl])
if previous then return tonumber(previous) end
local code = 0
if redis.call("EXISTS", jobKey) == 0 then
  code = -1
elseif redis.call("ZREM", KEYS[KEY.delayed], jobId) == 0 then
  code = -3
end
if code < 0 then
  redis.call("DEL", KEYS[KEY.replayGuard])
  return code
end
local priority = tonumber(redis.call("HGET", jobKey, "priority")) or 0
if priority > 0 then
  local counter = redis.call("INCR", KEYS[KEY.priorityCounter])
  redis.call("ZADD", KEYS[KEY.prioritized], priority * 4294967296 + counter % 4294967296, jobId)
else
  redis.call("LPUSH", KEYS[KEY.wait], jobId)
end
if not isQueuePausedOrMaxed(KEYS[KEY.meta], KEYS[KEY.active]) then
  redis.call("ZADD", KEYS[KEY.marker], 0, "0")
end
redis.call("XADD", KEYS[KEY.events], "*", "event", "waiting", "jobId", jobId, "prev", "delayed")
redis.call("HSET", jobKey, "delay", 0)
return 0
