-- Takes a job id out of whichever structure holds it, in BullMQ's order, and returns BullMQ's name
-- for that state (wait, paused, active, delayed, prioritized, completed, failed, waiting-children),
-- or "unknown". A list holds a job id once, and LREM walks it from one end to the id: wait and paused
-- are walked from the end nearer the job's time (`timestamp`, the job's created time, may be nil), as
-- adds push on the left and the oldest are on the right, so a job near either end costs little in a
-- list of any length (BullMQ reads the whole list for each job).
local function removeFromAnyState(prefix, jobId, timestamp)
  for _, state in ipairs({ "completed", "waiting-children", "delayed", "failed", "prioritized" }) do
    if redis.call("ZREM", prefix .. state, jobId) == 1 then return state end
  end
  local created = tonumber(timestamp)
  for _, state in ipairs({ "wait", "paused", "active" }) do
    local key, count = prefix .. state, -1
    if created and state ~= "active" then
      local ends = { redis.call("LINDEX", key, 0), redis.call("LINDEX", key, -1) }
      local newest = ends[1] and tonumber(redis.call("HGET", prefix .. ends[1], "timestamp"))
      local oldest = ends[2] and tonumber(redis.call("HGET", prefix .. ends[2], "timestamp"))
      if newest and oldest and newest - created < created - oldest then count = 1 end
    end
    if redis.call("LREM", key, count, jobId) > 0 then return state end
  end
  return "unknown"
end
