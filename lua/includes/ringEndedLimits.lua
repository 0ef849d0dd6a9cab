-- Groups whose rate limit ended by `now` leave nq:glimited and rejoin the round-robin ring at its
-- back (an emptied one is dropped by the next lease), 1,000 at most per call. `g` is groupKeys(prefix).
-- Returns when the next limit ends (ms, 0 for none; at or before `now` when more ended).
-- @include ringJoin
local function ringEndedLimits(g, now)
  local ended = redis.call("ZRANGEBYSCORE", g.limited, 0, now, "LIMIT", 0, 1000)
  if #ended > 0 then
    redis.call("ZREM", g.limited, unpack(ended))
    ringJoin(g, ended, "NX")
  end
  local first = redis.call("ZRANGE", g.limited, 0, 0, "WITHSCORES")
  return first[2] and tonumber(first[2]) or 0
end
