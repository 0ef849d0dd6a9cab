-- Moves one queue's staged ids into its structures in a few bulk commands: LPUSH and RPUSH in the
-- order they were staged, ZADD with the staged scores, then the markers as flushQueue writes them.
-- Reads only the staging keys the record (`counts`) says hold something. When the add staged grouped
-- jobs (`<g>:grouped`), they go to their groups or nq:gdelayed instead (splitGrouped), and q.grouped
-- tells flushDeferredJobs to sort its jobs too.
-- @include splitGrouped
local function pushStagedQueue(q, g, counts)
  local function inChunks(command, key, items)
    for from = 1, #items, 4000 do
      redis.call(command, key, unpack(items, from, math.min(from + 3999, #items)))
    end
  end
  local function staged(kind, key, scored)
    if (counts[g .. ":" .. kind] or 0) == 0 then return {} end
    if not scored then return redis.call("LRANGE", key, 0, -1) end
    local flat = redis.call("ZRANGE", key, 0, -1, "WITHSCORES")
    local adds = {}
    for i = 1, #flat, 2 do adds[i], adds[i + 1] = flat[i + 1], flat[i] end
    return adds
  end
  local wait, lifo = staged("wait", q.stagedWait), staged("lifo", q.stagedLifo)
  local prioritized = staged("prioritized", q.stagedPrioritized, true)
  local delayed = staged("delayed", q.stagedDelayed, true)
  q.grouped = (counts[g .. ":grouped"] or 0) > 0
  if q.grouped then
    local lists = { wait = wait, lifo = lifo, prioritized = prioritized, delayed = delayed }
    sortOutGrouped(q.prefix, lists)
    wait, lifo, prioritized, delayed = lists.wait, lists.lifo, lists.prioritized, lists.delayed
  end
  inChunks("LPUSH", q.wait, wait)
  inChunks("RPUSH", q.wait, lifo)
  inChunks("ZADD", q.prioritized, prioritized)
  inChunks("ZADD", q.delayed, delayed)
  inChunks("ZADD", q.waitingChildren, staged("waiting-children", q.stagedWaitingChildren, true))
  if #wait + #lifo + #prioritized > 0 then redis.call("ZADD", q.marker, 0, "0") end
  if #delayed > 0 then redis.call("ZADD", q.marker, "LT", tonumber(delayed[1]) / 4096, "1") end
end
