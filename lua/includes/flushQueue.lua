-- Writes what storeJob queued for one queue: one LPUSH, one RPUSH and one ZADD per structure (in
-- chunks that stay under Lua's unpack limit), then the markers BullMQ's blocked workers wait on.
-- The delayed marker only ever moves earlier here (ZADD LT): an earlier job already has its own
-- marker or a worker blocked until it, and a marker in the past just wakes a worker that re-reads.
-- Grouped jobs go to their groups (no marker: BullMQ workers never take them).
-- @include pushGroupJobs
local function flushQueue(q)
  local function inChunks(command, key, items)
    for from = 1, #items, 4000 do
      redis.call(command, key, unpack(items, from, math.min(from + 3999, #items)))
    end
  end
  inChunks("LPUSH", q.wait, q.leftPushes)
  inChunks("RPUSH", q.wait, q.rightPushes)
  inChunks("ZADD", q.prioritized, q.prioritizedAdds)
  inChunks("ZADD", q.delayed, q.delayedAdds)
  if q.groupPushes then
    pushGroupJobs(q.prefix, q.prefix .. "meta", q.groupPushes)
    inChunks("ZADD", q.prefix .. "nq:gdelayed", q.groupDelayedAdds)
    -- Workers look for grouped delayed jobs once the meta says the queue has groups.
    if #q.groupDelayedAdds > 0 then redis.call("HSET", q.prefix .. "meta", "nq:groups", 1) end
  end
  if q.ready then redis.call("ZADD", q.marker, 0, "0") end
  if q.earliestScore then redis.call("ZADD", q.marker, "LT", q.earliestScore / 4096, "1") end
end
