-- The sweeper's promotions for one queue `q`: due delayed jobs to wait or prioritized (up to `limit`,
-- with the "ready" marker unless paused), due grouped delayed jobs to their groups (sweepGroups).
-- Returns how many moved, the next due time of either (ms, 0 for none) and the groups with ready jobs.
-- @include promoteDelayedJobs
-- @include sweepGroups
local function sweepDelayed(q, now, limit)
  local promoted, nextDelayedAt = 0, 0
  local first = redis.call("ZRANGE", q.delayed, 0, 0, "WITHSCORES")
  if first[2] and tonumber(first[2]) <= (now + 1) * 4096 - 1 then
    local moved = promoteDelayedJobs(q.prefix, q.delayed, q.wait, q.prioritized, q.priorityCounter, q.events, now,
      limit)
    for id in pairs(moved) do
      redis.call("HSET", q.prefix .. id, "delay", 0)
      promoted = promoted + 1
    end
    if promoted > 0 and redis.call("HEXISTS", q.meta, "paused") == 0 then redis.call("ZADD", q.marker, 0, "0") end
    first = redis.call("ZRANGE", q.delayed, 0, 0, "WITHSCORES")
  end
  if first[2] then nextDelayedAt = math.floor(tonumber(first[2]) / 4096) end
  local groupsPromoted, groupsDue, readyGroups = sweepGroups(q, now, limit)
  promoted = promoted + groupsPromoted
  if groupsDue > 0 and (nextDelayedAt == 0 or groupsDue < nextDelayedAt) then nextDelayedAt = groupsDue end
  return promoted, nextDelayedAt, readyGroups
end
