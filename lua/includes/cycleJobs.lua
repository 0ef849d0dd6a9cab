-- One worker call, shared by ackAndLease (keys declared) and ackPromoteAndLease (`open`: promotes
-- due delayed jobs, prunes finished sets and leases from anywhere): acks the entries, leases up to
-- `count` jobs, peeks the next ones, and says whether jobs are ready and when the next delayed job is
-- due. A replayed call writes nothing and answers with the first call's codes and jobs.
-- Everything that could fail is read and checked before the replay guard, the call's first write.
-- @include checkIntegerArgs
-- @include readAckEntries
-- @include ackEntries
-- @include noteAttention
-- @include leaseReadyJobs
-- @include peekReady
-- @include promoteDelayedJobs
-- @include pruneFinished
-- @include encodeIds
-- @include decodeIds
-- @include holdsLock
-- @include groupsDueAt
local function cycleJobs(open)
  checkIntegerArgs("worker call", { "now", "leaseMs", "count", "peek", "guardTtl", "maxLenEvents", "events", "groupConcurrency",
    "groupLimitMax", "groupLimitDuration" })
  if tonumber(ARGV[ARG.count]) > 4000 or tonumber(ARGV[ARG.peek]) > 4000 then
    error("worker call: count and peek must be at most 4000")
  end
  local now = tonumber(ARGV[ARG.now])
  local q = { prefix = ARGV[ARG.prefix], events = KEYS[KEY.events], delayed = KEYS[KEY.delayed], wait = KEYS[KEY.wait],
    active = KEYS[KEY.active], prioritized = KEYS[KEY.prioritized], priorityCounter = KEYS[KEY.priorityCounter],
    stalled = KEYS[KEY.stalled], marker = KEYS[KEY.marker], meta = KEYS[KEY.meta], limiter = KEYS[KEY.limiter],
    finishedKeys = { completed = KEYS[KEY.completed], failed = KEYS[KEY.failed] }, maxLen = ARGV[ARG.maxLenEvents],
    level = tonumber(ARGV[ARG.events]), token = ARGV[ARG.leaseToken], now = now, leaseMs = ARGV[ARG.leaseMs],
    workerName = ARGV[ARG.workerName], limiterMax = ARGV[ARG.limiterMax], limiterDuration = ARGV[ARG.limiterDuration],
    finished = { completed = {}, failed = {} }, prunes = {}, dueScores = {}, delayedAdds = {},
    attention = KEYS[KEY.attention], groupConcurrency = tonumber(ARGV[ARG.groupConcurrency]),
    groupLimitMax = tonumber(ARGV[ARG.groupLimitMax]), groupLimitDuration = tonumber(ARGV[ARG.groupLimitDuration]),
    groupPushes = {}, groupDelayedAdds = {}, groupDueScores = {} }
  local jobs = readAckEntries(q.prefix)
  local candidates = not open and decodeIds(ARGV[ARG.candidates]) or nil
  if open then
    for spec in string.gmatch(ARGV[ARG.prunes], "[^;]+") do
      local target, keep, age, limit = string.match(spec, "^(%a+)|(-?%d+)|(%d+)|(%d+)$")
      if not q.finishedKeys[target or ""] then error("worker call: a prune spec is malformed") end
      q.prunes[spec] = { target, tonumber(keep), tonumber(age), tonumber(limit) }
    end
  end
  local out = { 0, 0, 0, 0, #jobs }
  local replayed = redis.call("SET", KEYS[KEY.replayGuard], "", "NX", "PX", ARGV[ARG.guardTtl]) == false
  local leased, deviations, codes, hashes, requeued = {}, "", {}, {}, {}
  if replayed then
    local saved = decodeIds(redis.call("GET", KEYS[KEY.replayGuard]) or "")
    deviations = saved[1] or ""
    for i = 1, #jobs do codes[i] = 1 end
    for part in string.gmatch(deviations, "[^;]+") do
      local index, code = string.match(part, "^(%d+):(-?%d+)$")
      codes[tonumber(index)] = tonumber(code)
    end
    -- Only the jobs this call's token still holds: a lock that lapsed meanwhile let another worker
    -- take (and maybe finish) the job.
    local savedIds, lockKeys = {}, {}
    for i = 2, #saved do
      savedIds[#savedIds + 1] = saved[i]
      lockKeys[#lockKeys + 1] = q.prefix .. saved[i] .. ":lock"
    end
    local locks = #lockKeys > 0 and redis.call("MGET", unpack(lockKeys)) or {}
    for i, id in ipairs(savedIds) do
      if holdsLock(locks[i], q.token) then
        leased[#leased + 1] = id
        hashes[#hashes + 1] = id
        hashes[#hashes + 1] = redis.call("HGETALL", q.prefix .. id)
      end
    end
  else
    codes, deviations, requeued = ackEntries(q, jobs, now)
  end
  for i = 1, #jobs do out[5 + i] = codes[i] end
  local first = redis.call("ZRANGE", q.delayed, 0, 0, "WITHSCORES")
  local nextDue = first[2] and math.floor(tonumber(first[2]) / 4096) or 0
  local promoted, exhausted, groupsLeft = {}, false, false
  local count = tonumber(ARGV[ARG.count])
  -- The queue's settings, read once for the lease; `nq:groups` says grouped jobs were ever added.
  local meta = (not replayed and count > 0) and redis.call("HMGET", q.meta, "paused", "concurrency", "max", "duration",
    "nq:groups", "nq:gpaused", "nq:glimited", "nq:ginbox") or {}
  local groupDue = groupsDueAt(q, meta, open and not replayed)
  if not replayed then
    if open then
      for _, prune in pairs(q.prunes) do
        pruneFinished(q.prefix, q.finishedKeys[prune[1]], prune[2], prune[3], prune[4], now)
      end
      if nextDue > 0 and nextDue <= now then
        promoted = promoteDelayedJobs(q.prefix, q.delayed, q.wait, q.prioritized, q.priorityCounter, q.events, now, 1000, q.level)
        first = redis.call("ZRANGE", q.delayed, 0, 0, "WITHSCORES")
        nextDue = first[2] and math.floor(tonumber(first[2]) / 4096) or 0
      end
    end
    if count > 0 then
      if candidates then
        for _, id in ipairs(requeued) do candidates[#candidates + 1] = id end
      end
      out[1], out[2], leased, exhausted, groupsLeft = leaseReadyJobs(q, meta, count, candidates, promoted, hashes, open)
    end
    for id in pairs(promoted) do redis.call("HSET", q.prefix .. id, "delay", 0) end
    -- The sweeper looks at the queue at its next pass: events to forward, leases to watch.
    if #jobs > 0 or #leased > 0 then noteAttention(q.attention, q.prefix, now) end
    if #leased > 0 or deviations ~= "" then
      local saved = { deviations }
      for _, id in ipairs(leased) do saved[#saved + 1] = id end
      redis.call("SET", KEYS[KEY.replayGuard], encodeIds(saved), "XX", "KEEPTTL")
    end
  end
  if groupDue > 0 and (nextDue == 0 or groupDue < nextDue) then nextDue = groupDue end
  local peek = exhausted and {} or peekReady(q, tonumber(ARGV[ARG.peek]))
  -- An ack-only call that acked grouped jobs looks whether groups have work (ungrouped queues pay nothing).
  local grouped = false
  for _, job in ipairs(jobs) do grouped = grouped or job.group ~= "" end
  if count == 0 and #peek == 0 and grouped and not replayed then groupsLeft = redis.call("EXISTS", q.prefix .. "nq:groups", q.prefix .. "nq:ginbox") > 0 end
  out[3], out[4] = (#peek > 0 or groupsLeft) and 1 or 0, nextDue
  if #peek > 0 and #leased > 0 then redis.call("ZADD", q.marker, 0, "0") end
  if #peek == 0 and not groupsLeft and nextDue == 0 and #jobs > 0 and not replayed and q.level >= 2 and out[1] == 0
    and redis.call("LLEN", q.active) == 0 then
    redis.call("XADD", q.events, "*", "event", "drained")
  end
  -- The drain's last call: with nothing ready, leased or delayed, the invocation leaves the registry.
  if ARGV[ARG.unregister] ~= "" and #peek == 0 and not groupsLeft and #leased == 0 and nextDue == 0 then
    redis.call("ZREM", KEYS[KEY.workers], ARGV[ARG.unregister])
  end
  out[#out + 1] = #peek
  for _, id in ipairs(peek) do out[#out + 1] = id end
  for _, item in ipairs(hashes) do out[#out + 1] = item end
  return out
end
