#!lua flags=allow-key-locking
--[[
changeDelay: Reschedules a delayed job to `delay` ms from now, as BullMQ's job.changeDelay: a new
delayed score (its sequence taken before the job leaves its old one, as BullMQ does), `delay` stored,
and the delay marker pointed at the earliest delayed job. Safe to replay: a replayed call that had
moved the job answers 0 again. A grouped job's `delayed` key is {P}nq:gdelayed.

KEYS
  replayGuard  nimbusq's replay guard for this call
  jobKey  {P}<jobId>
  delayed  {P}delayed
  meta  {P}meta
  marker  {P}marker
  events  {P}events
  attention  <prefix>:nq:due, the sweeper's attention index: the queue is noted for its next pass
ARGV
  jobId  string  the job id
  delay  int  the new delay (ms from now)
  now  int  the caller's clock (ms)
  guardTtl  int  how long the replay guard lives (ms)
REPLY done
  result  int  0 rescheduled
REPLY refused  nothing is written then
  code  code
CODES
  jobNotFound  -1  no such job
  notInState  -3  the job is not delayed
EVENTS
  delayed {jobId, delay: when it is now due (ms)}
]]
-- @include noteAttention
-- @include checkIntegerArgs
-- @include eventsMaxLen
-- @include nextDelayedScore
-- @include setDelayedMarker
-- @include startGuardedMove
-- The move takes the job out of delayed: its new due time must be computable before that.
checkIntegerArgs("changeDelay", { "delay", "now", "guardTtl" })
local jobKey, jobId = KEYS[KEY.jobKey], ARGV[ARG.jobId]
local refused = startGuardedMove(KEYS[KEY.replayGuard], ARGV[ARG.guardTtl], "0", jobKey, KEYS[KEY.delayed], jobId)
if refused then return refused end
local delay = tonumber(ARGV[ARG.delay])
local due = tonumber(ARGV[ARG.now]) + delay
local score = nextDelayedScore(KEYS[KEY.delayed], due)
redis.call("HSET", jobKey, "delay", delay)
redis.call("ZADD", KEYS[KEY.delayed], score, jobId)
local maxLen = eventsMaxLen(KEYS[KEY.meta])
redis.call("XADD", KEYS[KEY.events], "MAXLEN", "~", maxLen, "*", "event", "delayed", "jobId", jobId, "delay", due)
setDelayedMarker(KEYS[KEY.delayed], KEYS[KEY.marker])
noteAttention(KEYS[KEY.attention], string.sub(KEYS[KEY.events], 1, -7), 0)
return 0
