-- A job of a staged add that only the commit can decide, as addJobs would have: one with
-- deduplication (its hash is staged) claims its window now — created, it is queued in `q.deferred`
-- for its structure (flushDeferredJobs) and joins its parent's dependencies; deduplicated, its staged
-- hash goes — and an existing job re-added under a parent is linked to that parent. Returns the
-- outcome (1 created, 2 duplicated, 3 deduplicated), the id, and true when a linked child had already
-- completed (its parent may have nothing left to wait for).
-- @include deduplicateJob
-- @include attachExistingChild
-- @include nextDelayedScore
local function placeDeferredJob(q, job, level)
  if job.kind == "attach" then
    return 2, job.id, attachExistingChild(q.prefix, job.id, job.parentKey, job.parentField)
  end
  local owner, create = deduplicateJob(q.prefix, level >= 2 and q.events or nil, q.maxLen, job.dedupId,
    job.id, tonumber(job.dedupTtl), job.dedupExtend == "1", job.dedupReplace == "1")
  if not create then
    redis.call("DEL", q.prefix .. job.id)
    return 3, owner, false
  end
  local deferred, placement = q.deferred, job.placement
  local function add(list, first, second)
    table.insert(list, first)
    if second then table.insert(list, second) end
  end
  if placement == "delayed" then
    local score = nextDelayedScore(q.delayed, tonumber(job.timestamp) + tonumber(job.delay), q.dueScores)
    add(deferred.delayed, score, job.id)
  elseif placement == "waiting-children" then
    add(deferred.waitingChildren, job.timestamp, job.id)
  elseif placement == "prioritized" then
    local counter = redis.call("INCR", q.priorityCounter)
    add(deferred.prioritized, tonumber(job.priority) * 4294967296 + counter % 4294967296, job.id)
  else
    add(placement == "lifo" and deferred.lifo or deferred.wait, job.id)
  end
  if job.parentKey ~= "" then redis.call("SADD", job.parentKey .. ":dependencies", q.prefix .. job.id) end
  return 1, job.id, false
end
