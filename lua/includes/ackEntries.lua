-- The ack half of a worker call: finishes or requeues each job whose lock this worker still owns and
-- reports the others. A job has the fields of core/job/ack-entry.ts's AckEntry (id, token, outcome, value,
-- attemptsMade, stacktrace, due, priority, lifo, keepCount, keepAge, keepLimit, attempts, parentKey,
-- parentPrefix, parentPolicy, dedupId, deferred, deadLetter…). Returns one code per entry (1 done, -2 lock gone, -6 another owner, -3 not
-- active, -4/-9 completion refused because of children), the replay-guard text of the non-1 codes,
-- and the ids put back in wait or prioritized (declared, so the same call may lease them again).
-- Counts the jobs it completed and failed for good in KEYS[KEY.finishCounts] when that hash exists
-- (the including script declares it; the sweeper's metrics read creates it).
-- Keys built here: each job's hash, `:lock`, `:dependencies`, `:unsuccessful` (and on removal its
-- other sub-keys), its parent's keys, its deduplication key and its dead-letter queue's keys.
-- @include finishJob
-- @include requeueJob
-- @include refusedCompletions
-- @include removeFromActive
-- @include holdsLock
-- @include pushGroupJobs
-- @include releaseGroupSlots
local function ackEntries(q, jobs, now)
  local codes, deviations = {}, {}
  if #jobs == 0 then return codes, "", {} end
  local lockKeys = {}
  for i, job in ipairs(jobs) do lockKeys[i] = q.prefix .. job.id .. ":lock" end
  local locks = redis.call("MGET", unpack(lockKeys))
  local refused = refusedCompletions(q.prefix, jobs, locks)
  local held = {}
  for i, job in ipairs(jobs) do
    local code = 1
    if not locks[i] then code = -2 elseif not holdsLock(locks[i], job.token) then code = -6 end
    if code == 1 and refused[i] then code = refused[i] end
    codes[i] = code
    if code == 1 then held[#held + 1] = job.id end
  end
  local removed = removeFromActive(q.active, held)
  local owned, ownedLocks, ownedIds = {}, {}, {}
  for i, job in ipairs(jobs) do
    if codes[i] == 1 and not removed[job.id] then codes[i] = -3 end
    if codes[i] == 1 then
      owned[#owned + 1] = job
      ownedLocks[#ownedLocks + 1] = lockKeys[i]
      ownedIds[#ownedIds + 1] = job.id
    else
      deviations[#deviations + 1] = i .. ":" .. codes[i] .. ";"
    end
  end
  if #owned > 0 then
    redis.call("DEL", unpack(ownedLocks))
    redis.call("SREM", q.stalled, unpack(ownedIds))
  end
  local requeued, finished, slots = {}, { completed = 0, failed = 0 }, {}
  for _, job in ipairs(owned) do
    if job.group ~= "" then slots[job.group] = (slots[job.group] or 0) + 1 end
    if job.outcome == "completed" or job.outcome == "failed" then
      finishJob(q, job, now)
      finished[job.outcome] = finished[job.outcome] + 1
    else
      requeueJob(q, job, now)
      if job.outcome ~= "delayed" and job.group == "" then requeued[#requeued + 1] = job.id end
    end
  end
  for from = 1, #q.delayedAdds, 4000 do
    redis.call("ZADD", q.delayed, unpack(q.delayedAdds, from, math.min(from + 3999, #q.delayedAdds)))
  end
  -- Grouped jobs that left active: their groups' slots, then the ones put back (a freed slot first,
  -- so a full group rejoins the ring before its retried job joins the group).
  releaseGroupSlots(q.prefix, slots, q.groupConcurrency)
  pushGroupJobs(q.prefix, q.meta, q.groupPushes)
  for from = 1, #q.groupDelayedAdds, 4000 do
    redis.call("ZADD", q.prefix .. "nq:gdelayed", unpack(q.groupDelayedAdds, from, math.min(from + 3999, #q.groupDelayedAdds)))
  end
  for target, members in pairs(q.finished) do
    if #members > 0 then redis.call("ZADD", q.finishedKeys[target], unpack(members)) end
  end
  -- The sweeper's "completed/failed since the last pass" metrics, per call, not per job, and only
  -- once its metrics read has made the hash: a queue no sweeper reports on gets no key of ours.
  if finished.completed + finished.failed > 0 and redis.call("EXISTS", KEYS[KEY.finishCounts]) == 1 then
    for outcome, count in pairs(finished) do
      if count > 0 then redis.call("HINCRBY", KEYS[KEY.finishCounts], outcome, count) end
    end
  end
  if q.ready then redis.call("ZADD", q.marker, 0, "0") end
  if q.earliestDue then redis.call("ZADD", q.marker, "LT", q.earliestDue, "1") end
  return codes, table.concat(deviations), requeued
end
