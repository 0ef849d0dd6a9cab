-- Moves up to `limit` due delayed jobs (score <= (now + 1) * 4096 - 1) to wait, or to prioritized
-- when they have a priority, with BullMQ's `waiting prev delayed` event. Returns a table id → hash
-- (flat HGETALL) of the moved jobs: the caller resets their `delay` to 0 (the lease folds that into
-- the write it makes anyway when it takes the job in the same call).
local function promoteDelayedJobs(prefix, delayedKey, waitKey, prioritizedKey, counterKey, eventsKey, now, limit, level)
  local promoted = {}
  local due = redis.call("ZRANGEBYSCORE", delayedKey, 0, (now + 1) * 4096 - 1, "LIMIT", 0, limit)
  if #due == 0 then return promoted end
  for from = 1, #due, 4000 do
    redis.call("ZREM", delayedKey, unpack(due, from, math.min(from + 3999, #due)))
  end
  local toWait = {}
  for _, id in ipairs(due) do
    local hash = redis.call("HGETALL", prefix .. id)
    promoted[id] = hash
    local priority = 0
    for i = 1, #hash, 2 do
      if hash[i] == "priority" then priority = tonumber(hash[i + 1]) or 0 end
    end
    if priority > 0 then
      local counter = redis.call("INCR", counterKey)
      redis.call("ZADD", prioritizedKey, priority * 4294967296 + counter % 4294967296, id)
    else
      toWait[#toWait + 1] = id
    end
    if (level or 2) >= 2 then redis.call("XADD", eventsKey, "*", "event", "waiting", "jobId", id, "prev", "delayed") end
  end
  for from = 1, #toWait, 4000 do
    redis.call("LPUSH", waitKey, unpack(toWait, from, math.min(from + 3999, #toWait)))
  end
  return promoted
end
