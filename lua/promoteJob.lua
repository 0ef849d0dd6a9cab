--[[
promoteJob: Makes a delayed job ready now, as BullMQ's job.promote: out of delayed, into wait (LPUSH)
or prioritized (a fresh counter) with the marker unless the queue is paused or maxed, its `delay` set
to 0. A grouped job (its `delayed` key is then {P}nq:gdelayed) goes to its group instead. Safe to
replay: a replayed call that had promoted the job answers 0 again.

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
  attention  <prefix>:nq:due, the sweeper's attention index: the queue is noted for its next pass
ARGV
  jobId  string  the job id
  guardTtl  int  how long the replay guard lives (ms)
REPLY done
  result  int  0 promoted
REPLY refused  nothing is written then
  code  code
CODES
  jobNotFound  -1  no such job
  notInState  -3  the job is not delayed
EVENTS
  waiting {jobId, prev: delayed}
GLOBAL LOCK
  A grouped job goes to its group, whose keys are named by the gid in its hash, read inside.
]]
-- @include noteAttention
-- @include pushReadyJob
-- @include pushGroupJobs
-- @include startGuardedMove
local jobKey, jobId = KEYS[KEY.jobKey], ARGV[ARG.jobId]
local refused = startGuardedMove(KEYS[KEY.replayGuard], ARGV[ARG.guardTtl], "0", jobKey, KEYS[KEY.delayed], jobId)
if refused then return refused end
local k = {}
for name, index in pairs(KEY) do k[name] = KEYS[index] end
local fields = redis.call("HMGET", jobKey, "priority", "gid")
if fields[2] then
  pushGroupJobs(string.sub(KEYS[KEY.events], 1, -7), KEYS[KEY.meta], { { gid = fields[2], id = jobId, priority = fields[1] } })
else
  pushReadyJob(k, jobId, tonumber(fields[1]) or 0, false)
end
redis.call("XADD", KEYS[KEY.events], "*", "event", "waiting", "jobId", jobId, "prev", "delayed")
redis.call("HSET", jobKey, "delay", 0)
noteAttention(KEYS[KEY.attention], string.sub(KEYS[KEY.events], 1, -7), 0)
return 0
