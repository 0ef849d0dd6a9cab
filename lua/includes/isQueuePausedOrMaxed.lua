-- True when the queue is paused (meta.paused present) or at its global concurrency
-- (meta.concurrency set and LLEN active >= it): then BullMQ writes no "ready" marker.
local function isQueuePausedOrMaxed(metaKey, activeKey)
  local meta = redis.call("HMGET", metaKey, "paused", "concurrency")
  if meta[1] then return true end
  if meta[2] then
    return redis.call("LLEN", activeKey) >= tonumber(meta[2])
  end
  return false
end
