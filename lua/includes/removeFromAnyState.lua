-- Takes a job id out of whichever structure holds it, in BullMQ's order, and returns BullMQ's name
-- for that state (wait, paused, active, delayed, prioritized, completed, failed, waiting-children),
-- or "unknown".
local function removeFromAnyState(prefix, jobId)
  for _, state in ipairs({ "completed", "waiting-children", "delayed", "failed", "prioritized" }) do
    if redis.call("ZREM", prefix .. state, jobId) == 1 then return state end
  end
  for _, state in ipairs({ "wait", "paused", "active" }) do
    if redis.call("LREM", prefix .. state, 0, jobId) > 0 then return state end
  end
  return "unknown"
end
