-- True when `jobId` is the iteration its job scheduler (the job's `rjk`) currently counts as next,
-- `repeat:<schedulerId>:<millis>` (BullMQ's isJobSchedulerJob): removals refuse or skip it, since the
-- scheduler could not make its next run without it.
local function isSchedulerIteration(jobId, rjk, schedulersKey)
  if not rjk then return false end
  local millis = redis.call("ZSCORE", schedulersKey, rjk)
  -- ZSCORE answers the score as Redis prints it, the same text BullMQ builds the id from.
  return millis and jobId == "repeat:" .. rjk .. ":" .. millis or false
end
