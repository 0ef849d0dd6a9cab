-- Frees the running slots of grouped jobs that left active (`counts`: gid → jobs): a group's count
-- drops (its field goes at 0: an idle group keeps no key of ours), and a group that was full under
-- `concurrency` (0: none) rejoins the ring when it still has ready jobs.
-- @include groupKeys
local function releaseGroupSlots(prefix, counts, concurrency)
  local g = groupKeys(prefix)
  for gid, n in pairs(counts) do
    local running = redis.call("HINCRBY", g.running, gid, -n)
    if running <= 0 then redis.call("HDEL", g.running, gid) end
    if concurrency > 0 and running < concurrency and running + n >= concurrency
        and redis.call("EXISTS", g.jobs .. gid) == 1 then
      redis.call("ZADD", g.ring, "NX", redis.call("INCR", g.counter), gid)
    end
  end
end
