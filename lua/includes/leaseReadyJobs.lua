-- The lease half of a worker call: honours pause, the rate limiter (a manual rate limit too: it sets
-- the limiter to 2^53 - 1, which no max reaches) and global concurrency, takes up to `count` jobs —
-- only the peeked `candidates` when given (their keys are declared), else from anywhere — locks each
-- with `token`, writes processedOn/ats/pb and appends {id, hash, …} to `out`. `promoted` holds the
-- hashes of jobs promoted in this call (their `delay` becomes 0 in the same write). `meta` is the
-- queue's paused, concurrency, max, duration, nq:groups, nq:gpaused, nq:glimited, nq:ginbox. Grouped jobs come after the
-- ungrouped ones, and only in an `open` call (their keys are built here); a declared call reports
-- groups with work so that the worker's next call is open.
-- Returns status (0 leased, 1 paused, 2 rate limited, 3 at global concurrency), info (the limiter's
-- TTL when rate limited), the leased ids, whether wait and prioritized ran out (taking from
-- anywhere, fewer jobs than asked: nothing is left to peek), and whether groups have work left.
-- @include takeCandidates
-- @include takeReadyJobs
-- @include takeGroupJobs
-- @include drainGroupInbox
-- @include releaseGroupSlots
local function leaseReadyJobs(q, meta, count, candidates, promoted, out, open)
  if meta[1] then return 1, 0, {}, false, false end
  local maxJobs = tonumber(meta[3]) or tonumber(q.limiterMax) or 0
  local used = tonumber(redis.call("GET", q.limiter)) or 0
  if maxJobs > 0 or used >= 9007199254740991 then
    if used >= maxJobs then
      local ttl = redis.call("PTTL", q.limiter)
      if ttl > 0 then return 2, ttl, {}, false, false end
      redis.call("DEL", q.limiter)
      used = 0
    end
    if maxJobs > 0 then count = math.min(count, maxJobs - used) end
  end
  -- A global concurrency that is no number counts as none: this runs after the ack's writes.
  if tonumber(meta[2]) then
    count = math.min(count, tonumber(meta[2]) - redis.call("LLEN", q.active))
    if count <= 0 then return 3, 0, {}, false, false end
  end
  local ids
  local exhausted = false
  if candidates then
    ids = takeCandidates(q, count, candidates)
  else
    ids = takeReadyJobs(q.wait, q.prioritized, q.active, count)
    exhausted = #ids < count
  end
  local groupsLeft, origin = false, {}
  if meta[5] and #ids < count then
    if open then
      if meta[8] then drainGroupInbox(q.prefix, q.meta, 1000) end
      local grouped
      grouped, groupsLeft, origin = takeGroupJobs(q, count - #ids, meta[6], meta[7])
      for _, id in ipairs(grouped) do ids[#ids + 1] = id end
    else
      groupsLeft = redis.call("EXISTS", q.prefix .. "nq:groups", q.prefix .. "nq:ginbox") > 0
    end
  end
  local leased, counted = {}, 0
  for _, id in ipairs(ids) do
    local key = q.prefix .. id
    local hash = promoted[id] or redis.call("HGETALL", key)
    if #hash == 0 then
      redis.call("LREM", q.active, -1, id)
      -- A grouped job removed without leaving its group (BullMQ's job.remove): its slot is free again.
      if origin[id] then
        releaseGroupSlots(q.prefix, { [origin[id]] = 1 })
        groupsLeft = true
      end
    else
      local started, deferred = 0, false
      for i = 1, #hash, 2 do
        if hash[i] == "ats" then started = tonumber(hash[i + 1]) or 0 elseif hash[i] == "defa" then deferred = true end
        if promoted[id] and hash[i] == "delay" then hash[i + 1] = "0" end
      end
      if not deferred then counted = counted + 1 end
      redis.call("SET", key .. ":lock", q.token, "PX", q.leaseMs)
      local fields = { "processedOn", q.now, "ats", started + 1 }
      if q.workerName ~= "" then table.insert(fields, "pb"); table.insert(fields, q.workerName) end
      if promoted[id] then table.insert(fields, "delay"); table.insert(fields, 0); promoted[id] = nil end
      redis.call("HSET", key, unpack(fields))
      if q.level >= 2 then redis.call("XADD", q.events, "*", "event", "active", "jobId", id, "prev", "waiting") end
      leased[#leased + 1] = id
      out[#out + 1] = id
      out[#out + 1] = hash
    end
  end
  if maxJobs > 0 and counted > 0 then
    local duration = tonumber(q.limiterDuration) or 0
    if duration <= 0 then duration = tonumber(meta[4]) or 0 end
    if redis.call("INCRBY", q.limiter, counted) == counted and duration > 0 then
      redis.call("PEXPIRE", q.limiter, math.floor(duration))
    end
  end
  return 0, 0, leased, exhausted, groupsLeft
end
