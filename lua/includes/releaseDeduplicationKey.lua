-- A job being removed ends the deduplication window it owns (its `de:` key and any stored `dn:`
-- next job); a window that another job took over is left alone.
local function releaseDeduplicationKey(prefix, jobId, dedupId)
  if not dedupId then return end
  local key = prefix .. "de:" .. dedupId
  if redis.call("GET", key) == jobId then redis.call("DEL", key, prefix .. "dn:" .. dedupId) end
end
