-- Writes what stageJob queued in one call into the add's staging keys, adds what it wrote to the
-- staging record's counts (the commit compares them with what it finds, so a staging key that
-- expired is noticed, never committed in part), and gives every staging key the TTL again.
local function flushStagedChunk(keys, queues, out, ttl)
  local counts = { "chunks", 1 }
  local touched = { keys.stage }
  local function put(command, key, items, field, width)
    table.insert(touched, key)
    if #items == 0 then return end
    for from = 1, #items, 4000 do
      redis.call(command, key, unpack(items, from, math.min(from + 3999, #items)))
    end
    table.insert(counts, field)
    table.insert(counts, #items / width)
  end
  put("RPUSH", keys.stagedKeys, out.keys, "keys", 1)
  put("RPUSH", keys.stagedCustomKeys, out.customKeys, "customKeys", 1)
  for g, q in ipairs(queues) do
    local staged = q.staged
    put("RPUSH", q.stagedWait, staged.wait, g .. ":wait", 1)
    put("RPUSH", q.stagedLifo, staged.lifo, g .. ":lifo", 1)
    put("ZADD", q.stagedPrioritized, staged.prioritized, g .. ":prioritized", 2)
    put("ZADD", q.stagedDelayed, staged.delayed, g .. ":delayed", 2)
    put("ZADD", q.stagedWaitingChildren, staged.waitingChildren, g .. ":waiting-children", 2)
    if q.grouped then
      table.insert(counts, g .. ":grouped")
      table.insert(counts, q.grouped)
    end
  end
  for parentKey, children in pairs(out.deps) do
    redis.call("HSET", keys.parents, parentKey, out.parents[parentKey])
    put("SADD", keys.stage .. ":deps:" .. parentKey, children, "deps:" .. parentKey, 1)
  end
  table.insert(touched, keys.parents)
  for i = 1, #counts, 2 do redis.call("HINCRBY", keys.stage, counts[i], counts[i + 1]) end
  for _, key in ipairs(touched) do redis.call("PEXPIRE", key, ttl) end
end
