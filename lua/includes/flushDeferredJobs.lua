-- Writes what placeDeferredJob queued for one queue, a few bulk commands as flushQueue does, and the
-- markers. These jobs enter after the add's staged ones (the commit decides them last). Grouped ones
-- (the add staged grouped jobs: q.grouped) go to their groups or nq:gdelayed.
-- @include splitGrouped
local function flushDeferredJobs(q)
  local function inChunks(command, key, items)
    for from = 1, #items, 4000 do
      redis.call(command, key, unpack(items, from, math.min(from + 3999, #items)))
    end
  end
  local deferred = q.deferred
  if q.grouped then sortOutGrouped(q.prefix, deferred) end
  inChunks("LPUSH", q.wait, deferred.wait)
  inChunks("RPUSH", q.wait, deferred.lifo)
  inChunks("ZADD", q.prioritized, deferred.prioritized)
  inChunks("ZADD", q.delayed, deferred.delayed)
  inChunks("ZADD", q.waitingChildren, deferred.waitingChildren)
  if #deferred.wait + #deferred.lifo + #deferred.prioritized > 0 then redis.call("ZADD", q.marker, 0, "0") end
  local earliest
  for i = 1, #deferred.delayed, 2 do
    if not earliest or deferred.delayed[i] < earliest then earliest = deferred.delayed[i] end
  end
  if earliest then redis.call("ZADD", q.marker, "LT", earliest / 4096, "1") end
end
