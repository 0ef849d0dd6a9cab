-- Reads, once per call and queue, what adds need from meta: paused or at global concurrency (no
-- "ready" marker then) and the events stream cap, which BullMQ writes lazily as 10000 when missing.
local function loadQueueMeta(q)
  if q.maxLen then return end
  local meta = redis.call("HMGET", q.meta, "paused", "concurrency", "opts.maxLenEvents")
  q.blocked = meta[1] and true or false
  if not q.blocked and meta[2] then q.blocked = redis.call("LLEN", q.active) >= tonumber(meta[2]) end
  q.maxLen = meta[3]
  if not q.maxLen then
    q.maxLen = "10000"
    redis.call("HSET", q.meta, "opts.maxLenEvents", q.maxLen)
  end
  q.leftPushes, q.rightPushes, q.prioritizedAdds, q.delayedAdds, q.dueScores = {}, {}, {}, {}, {}
end
