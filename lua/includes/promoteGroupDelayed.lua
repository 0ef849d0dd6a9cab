-- Moves up to `limit` due grouped delayed jobs (nq:gdelayed, BullMQ's delayed score) into their
-- groups with BullMQ's `waiting prev delayed` event and their `delay` reset to 0. Returns how many
-- moved and the next due time (ms) left, 0 for none.
-- @include groupKeys
-- @include pushGroupJobs
local function promoteGroupDelayed(prefix, metaKey, eventsKey, now, limit, level)
  local g = groupKeys(prefix)
  local due = redis.call("ZRANGEBYSCORE", g.delayed, 0, (now + 1) * 4096 - 1, "LIMIT", 0, limit)
  if #due > 0 then
    for from = 1, #due, 4000 do redis.call("ZREM", g.delayed, unpack(due, from, math.min(from + 3999, #due))) end
    local items = {}
    for _, id in ipairs(due) do
      local fields = redis.call("HMGET", prefix .. id, "gid", "priority")
      if fields[1] then
        items[#items + 1] = { gid = fields[1], id = id, priority = fields[2] }
        redis.call("HSET", prefix .. id, "delay", 0)
        if (level or 2) >= 2 then redis.call("XADD", eventsKey, "*", "event", "waiting", "jobId", id, "prev", "delayed") end
      end
    end
    pushGroupJobs(prefix, metaKey, items)
  end
  local first = redis.call("ZRANGE", g.delayed, 0, 0, "WITHSCORES")
  return #due, first[2] and math.floor(tonumber(first[2]) / 4096) or 0
end
