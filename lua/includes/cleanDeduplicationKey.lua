-- After a job with `deid` finishes: a window without TTL that this job owns ends now; a window with
-- a TTL runs out on its own (BullMQ's rules).
local function cleanDeduplicationKey(prefix, dedupId, jobId)
  local key = prefix .. "de:" .. dedupId
  local ttl = redis.call("PTTL", key)
  if ttl == 0 or (ttl == -1 and redis.call("GET", key) == jobId) then redis.call("DEL", key) end
end
