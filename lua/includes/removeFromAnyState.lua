-- Takes a job id out of whichever structure holds it, in BullMQ's order, and returns BullMQ's name
-- for that state (wait, paused, active, delayed, prioritized, completed, failed, waiting-children),
-- or "unknown". Wait and paused are walked from the end nearer the job's creation time `timestamp`
-- (may be nil), where BullMQ reads the whole list for each job.
-- @include removeFromList
local function removeFromAnyState(prefix, jobId, timestamp)
  for _, state in ipairs({ "completed", "waiting-children", "delayed", "failed", "prioritized" }) do
    if redis.call("ZREM", prefix .. state, jobId) == 1 then return state end
  end
  for _, state in ipairs({ "wait", "paused" }) do
    if removeFromList(prefix .. state, prefix, jobId, timestamp) > 0 then return state end
  end
  if redis.call("LREM", prefix .. "active", -1, jobId) > 0 then return "active" end
  return "unknown"
end
