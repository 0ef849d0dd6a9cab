-- Puts a leased job back: `delayed` (a retry with backoff, or the processor's moveToDelayed) at its
-- due time; `waiting` (a retry without backoff) at the back of the line, or the front for lifo;
-- `returned` (rate limited, or never started before a deadline) at the front of the line, or at its
-- priority's head. Failed attempts record their reason and stack. A grouped job (job.group) goes
-- back to its group, or to nq:gdelayed, through q.groupPushes / q.groupDelayedAdds.
-- @include nextDelayedScore
local function requeueJob(q, job, now)
  local id, key = job.id, q.prefix .. job.id
  local fields = {}
  if job.value ~= "" then fields = { "failedReason", job.value, "stacktrace", job.stacktrace } end
  if job.attemptsMade ~= "" then table.insert(fields, "atm"); table.insert(fields, job.attemptsMade) end
  if job.outcome == "delayed" then
    local due = tonumber(job.due)
    table.insert(fields, "delay"); table.insert(fields, math.max(due - now, 0))
    redis.call("HSET", key, unpack(fields))
    if job.group ~= "" then
      table.insert(q.groupDelayedAdds, nextDelayedScore(q.prefix .. "nq:gdelayed", due, q.groupDueScores))
      table.insert(q.groupDelayedAdds, id)
      if not q.groupEarliestDue or due < q.groupEarliestDue then q.groupEarliestDue = due end
    else
      table.insert(q.delayedAdds, nextDelayedScore(q.delayed, due, q.dueScores))
      table.insert(q.delayedAdds, id)
      if not q.earliestDue or due < q.earliestDue then q.earliestDue = due end
    end
    if (q.level or 2) >= 2 then
      redis.call("XADD", q.events, "MAXLEN", "~", q.maxLen, "*", "event", "delayed", "jobId", id, "delay", due)
    end
    return
  end
  if #fields > 0 then redis.call("HSET", key, unpack(fields)) end
  local priority = tonumber(job.priority) or 0
  local front = job.outcome == "returned"
  if job.group ~= "" then
    table.insert(q.groupPushes, { gid = job.group, id = id, priority = priority, lifo = job.lifo == "1", front = front })
  elseif priority > 0 then
    if front then
      redis.call("ZADD", q.prioritized, priority * 4294967296, id)
    else
      local counter = redis.call("INCR", q.priorityCounter)
      redis.call("ZADD", q.prioritized, priority * 4294967296 + counter % 4294967296, id)
    end
  elseif front or job.lifo == "1" then
    redis.call("RPUSH", q.wait, id)
  else
    redis.call("LPUSH", q.wait, id)
  end
  if job.group == "" then q.ready = true end
  if (q.level or 2) >= 2 then
    redis.call("XADD", q.events, "MAXLEN", "~", q.maxLen, "*", "event", "waiting", "jobId", id, "prev", "active")
  end
end
