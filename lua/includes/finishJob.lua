-- Completes a job or fails it for good: its fields, its finished set (batched in q.finished) or
-- immediate removal (keep count 0), the completed / failed / retries-exhausted events, the
-- deduplication window, the parent, and a failed job's dead letter (with `q.attention`, the parent's and
-- the dead letter's queues are noted in the sweeper's attention index). `q.level` (events: 2 all, 1 final
-- only, 0 none; nil is 2) says which events are written; `job.prev` the state the event names as prev
-- (nil: active).
-- @include addDeadLetter
-- @include removeJobKeys
-- @include cleanDeduplicationKey
-- @include settleParent
-- @include noteAttention
local function finishJob(q, job, now)
  local id, key = job.id, q.prefix .. job.id
  local failed = job.outcome == "failed"
  local target = failed and "failed" or "completed"
  local valueField = failed and "failedReason" or "returnvalue"
  if failed then
    redis.call("HSET", key, "failedReason", job.value, "stacktrace", job.stacktrace, "finishedOn", now, "atm", job.attemptsMade)
    if job.deferred == "1" then redis.call("HDEL", key, "defa") end
  else
    redis.call("HSET", key, "returnvalue", job.value, "finishedOn", now, "atm", job.attemptsMade)
  end
  if job.dedupId ~= "" then cleanDeduplicationKey(q.prefix, job.dedupId, id) end
  if job.parentKey ~= "" then
    settleParent(job, key, failed, job.value, now)
    if q.attention then noteAttention(q.attention, job.parentPrefix, now) end
  end
  local keep = tonumber(job.keepCount)
  if keep == 0 then
    removeJobKeys(key)
  else
    local finished = q.finished[target]
    finished[#finished + 1] = now
    finished[#finished + 1] = id
    local age = tonumber(job.keepAge)
    if keep > 0 or age > 0 then
      q.prunes[target .. "|" .. keep .. "|" .. age .. "|" .. job.keepLimit] = { target, keep, age, tonumber(job.keepLimit) }
    end
  end
  local level = q.level or 2
  if level >= 1 then
    redis.call("XADD", q.events, "MAXLEN", "~", q.maxLen, "*", "event", target, "jobId", id, valueField, job.value,
      "prev", job.prev or "active")
  end
  if level >= 1 and failed and tonumber(job.attemptsMade) >= tonumber(job.attempts) then
    redis.call("XADD", q.events, "MAXLEN", "~", q.maxLen, "*", "event", "retries-exhausted", "jobId", id,
      "attemptsMade", job.attemptsMade)
  end
  if failed and job.deadLetter ~= "" then
    addDeadLetter(job, now, q.maxLen)
    if q.attention then noteAttention(q.attention, job.deadLetter, now) end
  end
end
