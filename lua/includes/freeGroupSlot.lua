-- A grouped job left active outside a worker's ack (removed, cleaned, cancelled after its lease
-- lapsed, moved to waiting-children): its group's running count drops (the field goes at 0), and the
-- group rejoins the ring when it has ready jobs (it may have left it full).
local function freeGroupSlot(prefix, gid)
  if redis.call("HINCRBY", prefix .. "nq:grun", gid, -1) <= 0 then redis.call("HDEL", prefix .. "nq:grun", gid) end
  if redis.call("EXISTS", prefix .. "nq:g:" .. gid) == 1 then
    redis.call("ZADD", prefix .. "nq:groups", "NX", redis.call("INCR", prefix .. "nq:gc"), gid)
  end
end
