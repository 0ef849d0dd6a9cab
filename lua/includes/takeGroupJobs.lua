-- The lease's grouped half (after ungrouped jobs, which go first as in BullMQ Pro): serves up to
-- `count` jobs from the first groups of the ring, round-robin — one job per group per round, so a
-- call of 50 over 10 groups takes 5 from each, over 100 groups one from each of the first 50 —
-- within each group's room under q.groupConcurrency (0: none) and the group rate limit
-- q.groupLimitMax per q.groupLimitDuration ms (fixed windows, counter nq:gl:<gid>). Served groups go
-- to the back of the ring; emptied, paused, full and rate-limited groups leave it (a full one rejoins
-- when an ack frees a slot, a paused one on resume, a limited one once its window or rateLimitGroup
-- ends: nq:glimited holds when, and is read while the meta flag says a group was ever limited).
-- Pushes the taken ids onto active, counts them as running, and returns them, whether groups are
-- left in the ring, and each id's group.
-- @include groupKeys
-- @include ringEndedLimits
-- @include ringJoin
local function takeGroupJobs(q, count, anyPaused, anyLimited)
  local g = groupKeys(q.prefix)
  local limitMax, concurrency = q.groupLimitMax, q.groupConcurrency
  -- Every list below stays within Lua's unpack limit (a worker leases at most 1,000 jobs a call).
  count = math.min(count, 1000)
  if anyLimited then ringEndedLimits(g, q.now) end
  local ring = redis.call("ZRANGE", g.ring, 0, count - 1)
  if #ring == 0 then return {}, false end
  local counterKeys = {}
  for i, gid in ipairs(ring) do counterKeys[i] = g.limiter .. gid end
  local paused = anyPaused and redis.call("SMISMEMBER", g.paused, unpack(ring)) or {}
  local limited = anyLimited and redis.call("ZMSCORE", g.limited, unpack(ring)) or {}
  local running = redis.call("HMGET", g.running, unpack(ring))
  local used = limitMax > 0 and redis.call("MGET", unpack(counterKeys)) or {}
  local leave, eligible, room, free, limitedUntil, position = {}, {}, {}, {}, {}, {}
  for i, gid in ipairs(ring) do
    position[gid] = i
    local slots = concurrency > 0 and concurrency - (tonumber(running[i]) or 0) or count
    local window = limitMax > 0 and limitMax - (tonumber(used[i]) or 0) or count
    if window <= 0 then
      local ttl = redis.call("PTTL", counterKeys[i])
      limitedUntil[#limitedUntil + 1] = q.now + math.max(ttl, 1)
      limitedUntil[#limitedUntil + 1] = gid
    end
    if paused[i] == 1 or slots <= 0 or window <= 0 or (limited[i] and tonumber(limited[i]) > q.now) then
      leave[#leave + 1] = gid
    else
      eligible[#eligible + 1] = gid
      room[gid], free[gid] = math.min(slots, window), slots
    end
  end
  local quota, left, gave = {}, count, true
  while left > 0 and gave do
    gave = false
    for _, gid in ipairs(eligible) do
      if left > 0 and (quota[gid] or 0) < room[gid] then
        quota[gid], left, gave = (quota[gid] or 0) + 1, left - 1, true
      end
    end
  end
  local ids, served, rounds, counts, origin = {}, {}, {}, {}, {}
  for _, gid in ipairs(eligible) do
    local want = quota[gid] or 0
    if want > 0 then
      local popped = redis.call("ZPOPMIN", g.jobs .. gid, want)
      local taken = #popped / 2
      -- Started in round-robin order too: the first job of every group, then the second…
      for r = 1, taken do
        rounds[r] = rounds[r] or {}
        table.insert(rounds[r], popped[2 * r - 1])
        origin[popped[2 * r - 1]] = gid
      end
      local exhausted = false
      if taken > 0 then
        counts[#counts + 1] = gid
        counts[#counts + 1] = (tonumber(running[position[gid]]) or 0) + taken
        if limitMax > 0 then
          local n = redis.call("INCRBY", g.limiter .. gid, taken)
          if n == taken then redis.call("PEXPIRE", g.limiter .. gid, q.groupLimitDuration) end
          if n >= limitMax then
            exhausted = true
            limitedUntil[#limitedUntil + 1] = q.now + math.max(redis.call("PTTL", g.limiter .. gid), 1)
            limitedUntil[#limitedUntil + 1] = gid
          end
        end
      end
      -- Fewer than asked: the group ran empty (its key is gone); a full one waits for an ack, a
      -- limited one for its window's end.
      if taken < want or exhausted or (concurrency > 0 and taken >= free[gid]) then
        leave[#leave + 1] = gid
      else
        served[#served + 1] = gid
      end
    end
  end
  for _, round in ipairs(rounds) do
    for _, id in ipairs(round) do ids[#ids + 1] = id end
  end
  -- The running counts, read above, written in one command for every group served.
  if #counts > 0 then redis.call("HSET", g.running, unpack(counts)) end
  if #limitedUntil > 0 then
    -- GT: a longer hold (rateLimitGroup) is not cut short by a window's end.
    redis.call("ZADD", g.limited, "GT", unpack(limitedUntil))
    redis.call("HSET", q.meta, "nq:glimited", 1)
  end
  if #leave > 0 then redis.call("ZREM", g.ring, unpack(leave)) end
  ringJoin(g, served, "XX")
  if #ids > 0 then redis.call("LPUSH", q.active, unpack(ids)) end
  return ids, #ring - #leave > 0 or #ring == count, origin
end
