-- Writes one new job's hash, its `added` event, its placement event, and queues its id for the
-- batched LPUSH/RPUSH/ZADD that flushQueue writes; links it to its parent's dependencies.
-- @include nextDelayedScore
-- @include writeJobHash
local function storeJob(q, job, id, now)
  local key = writeJobHash(q, job, id)
  local events = (q.level or 2) >= 2
  if events then redis.call("XADD", q.events, "*", "event", "added", "jobId", id, "name", job.name) end
  local placement = job.placement
  -- A grouped job waiting for its children waits as any parent; it joins its group once released.
  local grouped = (job.group or "") ~= "" and placement ~= "waiting-children"
  if grouped and placement == "delayed" then
    local due = tonumber(job.timestamp) + tonumber(job.delay)
    table.insert(q.groupDelayedAdds, nextDelayedScore(q.prefix .. "nq:gdelayed", due, q.groupDueScores))
    table.insert(q.groupDelayedAdds, id)
    if events then redis.call("XADD", q.events, "MAXLEN", "~", q.maxLen, "*", "event", "delayed", "jobId", id, "delay", due) end
  elseif grouped then
    table.insert(q.groupPushes, { gid = job.group, id = id, priority = job.priority, lifo = placement == "lifo" })
    if events then redis.call("XADD", q.events, "MAXLEN", "~", q.maxLen, "*", "event", "waiting", "jobId", id) end
  elseif placement == "delayed" then
    local due = tonumber(job.timestamp) + tonumber(job.delay)
    local score = nextDelayedScore(q.delayed, due, q.dueScores)
    if not q.earliestScore or score < q.earliestScore then q.earliestScore = score end
    table.insert(q.delayedAdds, score); table.insert(q.delayedAdds, id)
    if events then redis.call("XADD", q.events, "MAXLEN", "~", q.maxLen, "*", "event", "delayed", "jobId", id, "delay", due) end
  elseif placement == "waiting-children" then
    redis.call("ZADD", q.waitingChildren, job.timestamp, id)
    if events then redis.call("XADD", q.events, "MAXLEN", "~", q.maxLen, "*", "event", "waiting-children", "jobId", id) end
  else
    if placement == "prioritized" then
      local counter = redis.call("INCR", q.priorityCounter)
      table.insert(q.prioritizedAdds, tonumber(job.priority) * 4294967296 + counter % 4294967296)
      table.insert(q.prioritizedAdds, id)
    elseif placement == "lifo" then
      table.insert(q.rightPushes, id)
    else
      table.insert(q.leftPushes, id)
    end
    q.ready = true
    if events then redis.call("XADD", q.events, "MAXLEN", "~", q.maxLen, "*", "event", "waiting", "jobId", id) end
  end
  if job.parentKey ~= "" then redis.call("SADD", job.parentKey .. ":dependencies", key) end
end
