-- One new job of a staged add: its hash goes to its final key with a TTL (no structure lists it yet,
-- so no worker, listing or count sees it, and an abandoned staging expires), and its id, with the
-- score it will have, is queued for the staging lists and sets that commitStagedJobs pushes into the
-- queue's structures in one call. A child is queued for its parent's staged dependencies. A job with
-- deduplication is only stored: the commit decides it.
-- @include nextDelayedScore
-- @include writeJobHash
local function stageJob(q, job, id, ttl, out)
  local key = writeJobHash(q, job, id)
  redis.call("PEXPIRE", key, ttl)
  -- User-chosen ids go to their own list: the commit persists those itself as far as it can (see
  -- sealStagedJobs), auto and generated ids can never be asked for again.
  table.insert((job.customId ~= "" and job.generatedId ~= "1") and out.customKeys or out.keys, key)
  -- Grouped jobs are staged as any; the commit sorts them into their groups (pushStagedQueue).
  if (job.group or "") ~= "" and job.placement ~= "waiting-children" then q.grouped = (q.grouped or 0) + 1 end
  if job.dedupId ~= "" then return end
  local staged, placement = q.staged, job.placement
  local function add(list, first, second)
    table.insert(list, first)
    if second then table.insert(list, second) end
  end
  if placement == "delayed" then
    local due = tonumber(job.timestamp) + tonumber(job.delay)
    add(staged.delayed, nextDelayedScore(q.delayed, due, q.dueScores), id)
  elseif placement == "waiting-children" then
    add(staged.waitingChildren, job.timestamp, id)
  elseif placement == "prioritized" then
    local counter = redis.call("INCR", q.priorityCounter)
    add(staged.prioritized, tonumber(job.priority) * 4294967296 + counter % 4294967296, id)
  elseif placement == "lifo" then
    add(staged.lifo, id)
  else
    add(staged.wait, id)
  end
  if job.parentKey ~= "" then
    local deps = out.deps[job.parentKey]
    if not deps then
      deps = {}
      out.deps[job.parentKey] = deps
      out.parents[job.parentKey] = job.parentPrefix
    end
    table.insert(deps, key)
  end
end
