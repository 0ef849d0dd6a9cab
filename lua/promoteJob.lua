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
-- @include pushReadyJob
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
local k = {}
for name, index in pairs(KEY) do k[name] = KEYS[index] end
pushReadyJob(k, jobId, tonumber(redis.call("HGET", jobKey, "priority")) or 0, false)
redis.call("XADD", KEYS[KEY.events], "*", "event", "waiting", "jobId", jobId, "prev", "delayed")
redis.call("HSET", jobKey, "delay", 0)
return 0
