--[[
retryJob: Puts a finished job back in line, as BullMQ's job.retry(state) (reprocessJob): out of its
finished set, its finish fields dropped, into wait (or prioritized) with the marker, and back into its
parent's pending dependencies when it is a child. Safe to replay: a replayed call that had retried
the job answers 1 again instead of "not in that state".

KEYS
  replayGuard  nimbusq's replay guard for this call, <prefix>:nq-req:<queue>:<token>
  jobKey  {P}<jobId>
  finished  {P}failed or {P}completed: the set the job must be in
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
  state  "failed"|"completed"  the state the job must be in
  lifo  flag  "1" to put it at the head of wait (RPUSH), as the job's lifo option
  resetAttemptsMade  flag  "1" to drop atm (BullMQ's resetAttemptsMade)
  resetAttemptsStarted  flag  "1" to drop ats (BullMQ's resetAttemptsStarted)
  guardTtl  int  how long the replay guard lives (ms)
REPLY done
  result  int  1 retried (now waiting or prioritized)
REPLY refused  writes nothing, not even its replay guard
  code  code
CODES
  jobNotFound  -1  no such job
  notInState  -3  the job is not in that state
EVENTS
  waiting {jobId, prev: failed | completed}
GLOBAL LOCK
  Its parent's keys and its group's keys are named by fields of the job's hash, read inside.
]]
-- @include noteAttention
-- @include eventsMaxLen
-- @include pushReadyJob
-- @include pushGroupJobs
-- @include startGuardedMove
-- @include moveChildBackToParent
local jobKey, jobId, state = KEYS[KEY.jobKey], ARGV[ARG.jobId], ARGV[ARG.state]
local refused = startGuardedMove(KEYS[KEY.replayGuard], ARGV[ARG.guardTtl], "1", jobKey, KEYS[KEY.finished], jobId)
if refused then return refused end
local dropped = { "finishedOn", "processedOn", state == "failed" and "failedReason" or "returnvalue", "nq:cancel" }
if ARGV[ARG.resetAttemptsMade] == "1" then dropped[#dropped + 1] = "atm" end
if ARGV[ARG.resetAttemptsStarted] == "1" then dropped[#dropped + 1] = "ats" end
redis.call("HDEL", jobKey, unpack(dropped))
local fields = redis.call("HMGET", jobKey, "priority", "parentKey", "gid")
local priority = tonumber(fields[1]) or 0
local k = {}
for name, index in pairs(KEY) do k[name] = KEYS[index] end
if fields[3] then
  pushGroupJobs(string.sub(KEYS[KEY.events], 1, -7), KEYS[KEY.meta],
    { { gid = fields[3], id = jobId, priority = priority, lifo = ARGV[ARG.lifo] == "1" } })
else
  pushReadyJob(k, jobId, priority, ARGV[ARG.lifo] == "1")
end
moveChildBackToParent(jobKey, fields[2], state)
local maxLen = eventsMaxLen(KEYS[KEY.meta])
redis.call("XADD", KEYS[KEY.events], "MAXLEN", "~", maxLen, "*", "event", "waiting", "jobId", jobId, "prev", state)
noteAttention(KEYS[KEY.attention], string.sub(KEYS[KEY.events], 1, -7), 0)
return 1
