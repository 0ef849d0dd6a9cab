-- Takes a job id out of whichever structure holds it, in BullMQ's order, and returns BullMQ's name
-- for that state (wait, paused, active, delayed, prioritized, completed, failed, waiting-children),
-- or "unknown". Wait and paused are walked from the end nearer the job's creation time `timestamp`
-- (may be nil), where BullMQ reads the whole list for each job. A grouped job (`groupId`, its hash's
-- gid, may be nil) is also looked for in its group ("wait") and nimbusq's grouped delayed set; out of
-- active, it frees its group's running slot.
-- @include removeFromList
-- @include releaseGroupSlots
local function removeFromAnyState(prefix, jobId, timestamp, groupId)
  for _, state in ipairs({ "completed", "waiting-children", "delayed", "failed", "prioritized" }) do
    if redis.call("ZREM", prefix .. state, jobId) == 1 then return state end
  end
  for _, state in ipairs({ "wait", "paused" }) do
    if removeFromList(prefix .. state, prefix, jobId, timestamp) > 0 then return state end
  end
  if redis.call("LREM", prefix .. "active", -1, jobId) > 0 then
    if groupId then releaseGroupSlots(prefix, { [groupId] = 1 }) end
    return "active"
  end
  if groupId then
    if redis.call("ZREM", prefix .. "nq:g:" .. groupId, jobId) == 1 then return "wait" end
    if redis.call("ZREM", prefix .. "nq:gdelayed", jobId) == 1 then return "delayed" end
    if redis.call("LREM", prefix .. "nq:ginbox", 0, jobId) > 0 then return "wait" end
  end
  return "unknown"
end
