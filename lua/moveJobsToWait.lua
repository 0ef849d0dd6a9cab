--[[
moveJobsToWait: One bounded step of Queue.retryJobs (failed or completed jobs) or Queue.promoteJobs
(delayed jobs), as BullMQ's moveJobsToWait: up to `count` jobs with a score up to `maxScore` leave
their set for the head of wait (LPUSH, whatever their priority or lifo option, as in BullMQ); retried
jobs lose their finish fields and are pending again for their parent. One marker when the queue is
not paused or maxed. A retried grouped job goes back to its group instead (by priority), as a worker's
retry does. Safe to replay: a replayed step returns its first answer.

KEYS
  source  {P}failed, {P}completed, {P}delayed or {P}nq:gdelayed (grouped delayed jobs: to their groups)
  wait  {P}wait
  meta  {P}meta
  active  {P}active
  marker  {P}marker
  events  {P}events
  replayGuard  nimbusq's replay guard for this step
  attention  <prefix>:nq:due, the sweeper's attention index: the queue is noted for its next pass
ARGV
  prefix  string  the queue key prefix {P}
  state  "failed"|"completed"|"delayed"  the structure whose jobs move
  count  int  most jobs this step moves
  maxScore  string  the highest score moved (finishedOn for retries), "+inf" for all
  guardTtl  int  how long the replay guard lives (ms)
REPLY
  more  int  1 when the step moved `count` jobs (another step may find more)
  moved  int  how many moved
EVENTS
  waiting {jobId, prev: failed | completed | delayed} per job.
GLOBAL LOCK
  It moves the jobs it finds in the finished or delayed set, writing their hashes (and grouped ones
  into the groups their gid names).
]]
-- @include noteAttention
-- @include eventsMaxLen
-- @include replayedResult
-- @include saveResult
-- @include isQueuePausedOrMaxed
-- @include moveChildBackToParent
-- @include pushGroupJobs
local replayed = replayedResult(KEYS[KEY.replayGuard])
if replayed then return replayed end
local prefix, state, count = ARGV[ARG.prefix], ARGV[ARG.state], tonumber(ARGV[ARG.count])
local jobs = redis.call("ZRANGEBYSCORE", KEYS[KEY.source], 0, ARGV[ARG.maxScore], "LIMIT", 0, count)
if #jobs > 0 then
  local ungrouped, grouped = jobs, {}
  -- From nq:gdelayed (promoteJobs' second pass), every job goes to its group.
  local fromGroups = KEYS[KEY.source] == prefix .. "nq:gdelayed"
  if state ~= "delayed" or fromGroups then
    local valueField = state == "failed" and "failedReason" or "returnvalue"
    ungrouped = {}
    for _, id in ipairs(jobs) do
      local jobKey = prefix .. id
      if state ~= "delayed" then redis.call("HDEL", jobKey, "finishedOn", "processedOn", valueField, "nq:cancel") end
      local fields = redis.call("HMGET", jobKey, "parentKey", "gid", "priority")
      if state ~= "delayed" then moveChildBackToParent(jobKey, fields[1], state) end
      -- A grouped job goes back to its group.
      if fields[2] then grouped[#grouped + 1] = { gid = fields[2], id = id, priority = fields[3] } else ungrouped[#ungrouped + 1] = id end
    end
  end
  local maxLen = eventsMaxLen(KEYS[KEY.meta])
  for _, id in ipairs(jobs) do
    redis.call("XADD", KEYS[KEY.events], "MAXLEN", "~", maxLen, "*", "event", "waiting", "jobId", id, "prev", state)
  end
  for from = 1, #jobs, 4000 do
    local to = math.min(from + 3999, #jobs)
    redis.call("ZREM", KEYS[KEY.source], unpack(jobs, from, to))
  end
  for from = 1, #ungrouped, 4000 do
    redis.call("LPUSH", KEYS[KEY.wait], unpack(ungrouped, from, math.min(from + 3999, #ungrouped)))
  end
  pushGroupJobs(prefix, KEYS[KEY.meta], grouped)
  if not isQueuePausedOrMaxed(KEYS[KEY.meta], KEYS[KEY.active]) then
    redis.call("ZADD", KEYS[KEY.marker], 0, "0")
  end
end
noteAttention(KEYS[KEY.attention], prefix, 0)
return saveResult(KEYS[KEY.replayGuard], { #jobs >= count and 1 or 0, #jobs }, ARGV[ARG.guardTtl])
