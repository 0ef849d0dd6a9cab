-- True when the queue is paused (meta.paused present) or at its global concurrency
-- (meta.concurrency set and LLEN active >= it): then BullMQ writes no "ready" marker. A concurrency
-- that is no number counts as none (comparing it would stop the caller after its first write).
local function isQueuePausedOrMaxed(metaKey, activeKey)
  local meta = redis.call("HMGET", metaKey, "paused", "concurrency")
  if meta[1] then return true end
  local limit = tonumber(meta[2])
  if limit then
    return redis.call("LLEN", activeKey) >= limit
  end
  return false
end
