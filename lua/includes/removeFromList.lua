-- Wait and paused get adds on the left and hold the oldest jobs on the right: which end of such a list
-- is nearer a job, by its creation time `created` (ms; read from its hash when nil or false) against
-- the times of the jobs at both ends. LREM and LPOS walk from an end to the id, so a job near either
-- end costs little in a list of any length. Answers 1 (from the left) or -1 (from the right).
local function nearerEnd(key, prefix, jobId, created)
  local time = tonumber(created or redis.call("HGET", prefix .. jobId, "timestamp"))
  if not time then return -1 end
  local newest, oldest = redis.call("LINDEX", key, 0), redis.call("LINDEX", key, -1)
  newest = newest and tonumber(redis.call("HGET", prefix .. newest, "timestamp"))
  oldest = oldest and tonumber(redis.call("HGET", prefix .. oldest, "timestamp"))
  if newest and oldest and newest - time < time - oldest then return 1 end
  return -1
end
-- Takes a job id out of such a list from the nearer end; a list holds a job id once (every path that
-- pushes an id takes it out of its previous structure first). Answers how many entries went (0 or 1).
local function removeFromList(key, prefix, jobId, created)
  return redis.call("LREM", key, nearerEnd(key, prefix, jobId, created), jobId)
end
-- The end (1 or -1) that the job id is nearer in such a list, when the list holds it (else nil), for
-- an LREM from that end later in the same script.
local function findInList(key, prefix, jobId, created)
  local from = nearerEnd(key, prefix, jobId, created)
  if redis.call("LPOS", key, jobId, "RANK", from) then return from end
  return nil
end
