-- Moves up to `limit` due delayed jobs (score <= (now + 1) * 4096 - 1) to wait, or to prioritized
-- when they have a priority, with BullMQ's `waiting prev delayed` event and `delay` reset to 0.
-- Returns how many moved; a "ready" marker follows when the queue may take them.
local function promoteDelayedJobs(prefix, delayedKey, waitKey, prioritizedKey, counterKey, eventsKey, now, limit)
  local due = redis.call("ZRANGEBYSCORE", delayedKey, 0, (now + 1) * 4096 - 1, "LIMIT", 0, limit)
  if #due == 0 then return 0 end
  for from = 1, #due, 4000 do
    redis.call("ZREM", delayedKey, unpack(due, from, math.min(from + 3999, #due)))
  end
  local toWait = {}
  for _, id in ipairs(due) do
    local priority = tonumber(redis.call("HGET", prefix .. id, "priority")) or 0
    if priority > 0 then
      local counter = redis.call("INCR", counterKey)
      redis.call("ZADD", prioritizedKey, priority * 4294967296 + counter % 4294967296, id)
    else
      toWait[#toWait + 1] = id
    end
    redis.call("XADD", eventsKey, "*", "event", "waiting", "jobId", id, "prev", "delayed")
    redis.call("HSET", prefix .. id, "delay", 0)
  end
  for from = 1, #toWait, 4000 do
    redis.call("LPUSH", waitKey, unpack(toWait, from, math.min(from + 3999, #toWait)))
  end
  return #due
end
