-- Frees the running slots of grouped jobs that left active (`counts`: gid → jobs): the groups' counts
-- are read and written once per 1,000 groups (HMGET, HSET, and HDEL of those at 0: an idle group
-- keeps no field of ours), and a group that was full under `concurrency` (0: none) rejoins the ring
-- when it still has ready jobs.
-- @include groupKeys
local function releaseSlotsOf(g, counts, concurrency, gids)
  local before = redis.call("HMGET", g.running, unpack(gids))
  local kept, dropped = {}, {}
  for i, gid in ipairs(gids) do
    local was = tonumber(before[i]) or 0
    local running = was - counts[gid]
    if running > 0 then
      kept[#kept + 1] = gid
      kept[#kept + 1] = running
    else
      dropped[#dropped + 1] = gid
    end
    if concurrency > 0 and running < concurrency and was >= concurrency
        and redis.call("EXISTS", g.jobs .. gid) == 1 then
      redis.call("ZADD", g.ring, "NX", redis.call("INCR", g.counter), gid)
    end
  end
  if #kept > 0 then redis.call("HSET", g.running, unpack(kept)) end
  if #dropped > 0 then redis.call("HDEL", g.running, unpack(dropped)) end
end

local function releaseGroupSlots(prefix, counts, concurrency)
  local all = {}
  for gid in pairs(counts) do all[#all + 1] = gid end
  local g = groupKeys(prefix)
  -- In chunks of 1,000 groups: every unpack stays within Lua's limit.
  for from = 1, #all, 1000 do
    releaseSlotsOf(g, counts, concurrency, { unpack(all, from, math.min(from + 999, #all)) })
  end
end
