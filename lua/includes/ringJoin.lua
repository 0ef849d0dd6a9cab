-- Puts `gids` at the back of the round-robin ring, in their order, with fresh turns from one INCRBY:
-- `mode` "NX" adds the groups not in it, "XX" moves the ones that are. `g` is groupKeys(prefix) (or
-- any table with its `counter` and `ring`). Returns how many joined.
local function ringJoin(g, gids, mode)
  if #gids == 0 then return 0 end
  local last, turns, joined = redis.call("INCRBY", g.counter, #gids), {}, 0
  for i, gid in ipairs(gids) do
    turns[#turns + 1] = last - #gids + i
    turns[#turns + 1] = gid
  end
  for from = 1, #turns, 4000 do
    joined = joined + redis.call("ZADD", g.ring, mode, unpack(turns, from, math.min(from + 3999, #turns)))
  end
  return joined
end
