-- Second pass of addJobs: resolves each job's id (counter, custom id, duplicate, deduplication owner),
-- stores the new ones, flushes each queue, then releases parents whose only children already existed.
-- Returns the flat {outcome, id, …} result and the replay-guard text of the outcomes that differ
-- from "created with the expected id".
-- @include loadQueueMeta
-- @include storeJob
-- @include flushQueue
-- @include deduplicateJob
-- @include attachExistingChild
-- @include releaseParent
local function placeJobs(jobs, queues, now, maxLen, level)
  local result, deviations, parents = {}, {}, {}
  for i, job in ipairs(jobs) do
    local q = queues[job.queue]
    loadQueueMeta(q, maxLen)
    q.level = level or 2
    local id, outcome, create = job.customId, 1, true
    if id == "" then id = string.format("%d", q.last - q.counts + job.seq) end
    if job.exists then
      outcome, create = 2, false
      if job.parentKey ~= "" and attachExistingChild(q.prefix, id, job.parentKey, job.parentField) then
        parents[job.parentKey] = job.parentPrefix
      end
      if q.level >= 2 then redis.call("XADD", q.events, "MAXLEN", "~", q.maxLen, "*", "event", "duplicated", "jobId", id) end
    elseif job.dedupId ~= "" then
      local owner
      owner, create = deduplicateJob(q.prefix, q.level >= 2 and q.events or nil, q.maxLen, job.dedupId, id, tonumber(job.dedupTtl),
        job.dedupExtend == "1", job.dedupReplace == "1")
      if not create then id, outcome = owner, 3 end
    end
    if create then storeJob(q, job, id, now) end
    table.insert(result, outcome)
    table.insert(result, id)
    if outcome ~= 1 then table.insert(deviations, i .. ":" .. outcome .. ":" .. #id .. ":" .. id) end
  end
  for _, q in ipairs(queues) do
    if q.leftPushes then flushQueue(q) end
  end
  for parentKey, parentPrefix in pairs(parents) do
    if redis.call("SCARD", parentKey .. ":dependencies") == 0 then
      releaseParent(parentPrefix, string.sub(parentKey, #parentPrefix + 1), parentKey, now)
    end
  end
  return result, table.concat(deviations, ";")
end
