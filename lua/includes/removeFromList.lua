-- Takes a job id out of wait or paused, where adds push on the left and the oldest jobs are on the
-- right, with one LREM from the end nearer the job's creation time `created` (ms; nil: from the
-- right) judged by the creation times of the jobs at both ends. A list holds a job id once, and LREM
-- walks from its end to the id, so a job near either end costs little in a list of any length.
-- Answers how many entries went (0 or 1).
local function removeFromList(key, prefix, jobId, created)
  local count, time = -1, tonumber(created)
  if time then
    local newest, oldest = redis.call("LINDEX", key, 0), redis.call("LINDEX", key, -1)
    newest = newest and tonumber(redis.call("HGET", prefix .. newest, "timestamp"))
    oldest = oldest and tonumber(redis.call("HGET", prefix .. oldest, "timestamp"))
    if newest and oldest and newest - time < time - oldest then count = 1 end
  end
  return redis.call("LREM", key, count, jobId)
end
