-- Every group of a queue that has ready jobs, is paused, rate-limited or has jobs running, once each
-- (a group with ready jobs is in the ring, or out of it paused, limited or full, and then running).
-- `g` is groupKeys(prefix).
local function knownGroups(g)
  local seen, ids = {}, {}
  for _, list in ipairs({ redis.call("ZRANGE", g.ring, 0, -1), redis.call("SMEMBERS", g.paused),
      redis.call("ZRANGE", g.limited, 0, -1), redis.call("HKEYS", g.running) }) do
    for _, gid in ipairs(list) do
      if not seen[gid] then
        seen[gid] = true
        ids[#ids + 1] = gid
      end
    end
  end
  return ids
end
