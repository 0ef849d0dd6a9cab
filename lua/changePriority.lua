--[[
changePriority: Gives a job a new priority, as BullMQ's job.changePriority({ priority, lifo }): a job
waiting in wait or prioritized is placed again — priority 0 in wait (LPUSH, RPUSH with lifo),
otherwise in prioritized (after its peers, or ahead of them with lifo) — and `priority` is stored
whatever the job's state. A grouped job ready in its group is placed again in its group. Safe to replay: a replayed call answers 0 again and places nothing twice.

KEYS
  replayGuard  nimbusq's replay guard for this call
  jobKey  {P}<jobId>
  wait  {P}wait
  prioritized  {P}prioritized
  priorityCounter  {P}pc
  meta  {P}meta
  active  {P}active
  marker  {P}marker
ARGV
  jobId  string  the job id
  priority  int  the new priority, 0 for none
  lifo  flag  "1" to put the job ahead of its peers
  guardTtl  int  how long the replay guard lives (ms)
REPLY done
  result  int  0 changed
REPLY refused  nothing is written then
  code  code
CODES
  jobNotFound  -1  no such job
EVENTS
  none
GLOBAL LOCK
  A job leaving wait is found from the nearer end of the list, whose end jobs' hashes it reads, and
  a grouped job's group keys are named by the gid in its hash: both known only inside.
]]
-- @include checkIntegerArgs
-- @include isQueuePausedOrMaxed
-- @include startGuardedMove
-- @include removeFromList
-- @include pushGroupJobs
-- The job leaves wait or prioritized before its new score is computed from `priority`.
checkIntegerArgs("changePriority", { "priority", "guardTtl" })
local jobKey, jobId = KEYS[KEY.jobKey], ARGV[ARG.jobId]
local refused = startGuardedMove(KEYS[KEY.replayGuard], ARGV[ARG.guardTtl], "0", jobKey, nil, jobId)
if refused then return refused end
local priority, lifo = tonumber(ARGV[ARG.priority]), ARGV[ARG.lifo] == "1"
local function leaveWait()
  return removeFromList(KEYS[KEY.wait], string.sub(jobKey, 1, #jobKey - #jobId), jobId) > 0
end
if redis.call("ZREM", KEYS[KEY.prioritized], jobId) > 0 or leaveWait() then
  local ready = true
  if priority == 0 then
    redis.call(lifo and "RPUSH" or "LPUSH", KEYS[KEY.wait], jobId)
  elseif lifo then
    -- BullMQ's push-back score (a counter of 0) writes no marker.
    redis.call("ZADD", KEYS[KEY.prioritized], priority * 4294967296, jobId)
    ready = false
  else
    local counter = redis.call("INCR", KEYS[KEY.priorityCounter])
    redis.call("ZADD", KEYS[KEY.prioritized], priority * 4294967296 + counter % 4294967296, jobId)
  end
  if ready and not isQueuePausedOrMaxed(KEYS[KEY.meta], KEYS[KEY.active]) then
    redis.call("ZADD", KEYS[KEY.marker], 0, "0")
  end
else
  -- A grouped job ready in its group takes its new place there.
  local gid = redis.call("HGET", jobKey, "gid")
  local prefix = string.sub(jobKey, 1, #jobKey - #jobId)
  if gid and redis.call("ZREM", prefix .. "nq:g:" .. gid, jobId) > 0 then
    pushGroupJobs(prefix, KEYS[KEY.meta], { { gid = gid, id = jobId, priority = priority, lifo = lifo } })
  end
end
redis.call("HSET", jobKey, "priority", priority)
return 0
