-- Frees the running slots of grouped jobs that left active (`counts`: gid → jobs): the groups' counts
-- are read and written once per 1,000 groups (HMGET, HSET, and HDEL of those at 0: an idle group
-- keeps no field of ours), and a group that was full under `concurrency` (0: none) rejoins the ring
-- when it still has ready jobs. Without `concurrency` (a job that left active outside a worker's
-- ack: removed, cleaned, cancelled after its lease lapsed, moved to waiting-children; the setting is
-- not known there) a group with ready jobs rejoins whatever it held.
-- @include groupKeys
-- @include ringJoin
local function releaseSlotsOf(g, counts, concurrency, gids)
  local before = redis.call("HMGET", g.running, unpack(gids))
  local kept, dropped, rejoin = {}, {}, {}
  for i, gid in ipairs(gids) do
    local was = tonumber(before[i]) or 0
    local running = was - counts[gid]
    if running > 0 then
      kept[#kept + 1] = gid
      kept[#kept + 1] = running
    else
      dropped[#dropped + 1] = gid
    end
    local wasFull = not concurrency or (concurrency > 0 and running < concurrency and was >= concurrency)
    if wasFull and redis.call("EXISTS", g.jobs .. gid) == 1 then
      rejoin[#rejoin + 1] = gid
    end
  end
  ringJoin(g, rejoin, "NX")
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
