-- Removes a job as BullMQ's removeJobWithChildren: unlinked softly from its parent, then (with
-- children) each child depth-first — processed, failed, unsuccessful, then pending ones, across
-- queues —, then the job leaves its state, ends the deduplication window it owns, loses its keys, and
-- a `removed {jobId, prev}` event goes to its queue's stream. A child is unlinked from the parent
-- being removed (parentKey, parentPrefix) even when its own hash is gone, as in BullMQ. `maxLens`
-- (queue prefix → events cap) reads each queue's meta once per tree.
-- @include eventsMaxLen
-- @include splitJobKey
-- @include detachFromParent
-- @include parentPrefixOf
-- @include removeFromAnyState
-- @include releaseDeduplicationKey
-- @include removeJobKeys
local function removeJobTree(prefix, jobId, withChildren, parentKey, parentPrefix, maxLens)
  maxLens = maxLens or {}
  local jobKey = prefix .. jobId
  local fields = redis.call("HMGET", jobKey, "parentKey", "parent", "deid", "timestamp", "gid")
  if parentKey then
    detachFromParent(jobKey, parentKey, parentPrefix, false, prefix)
  else
    detachFromParent(jobKey, fields[1], parentPrefixOf(fields[2]), false, prefix)
  end
  if withChildren then
    local children = redis.call("HKEYS", jobKey .. ":processed")
    for _, key in ipairs(redis.call("HKEYS", jobKey .. ":failed")) do children[#children + 1] = key end
    for _, key in ipairs(redis.call("ZRANGE", jobKey .. ":unsuccessful", 0, -1)) do children[#children + 1] = key end
    for _, key in ipairs(redis.call("SMEMBERS", jobKey .. ":dependencies")) do children[#children + 1] = key end
    for _, childKey in ipairs(children) do
      local childPrefix, childId = splitJobKey(childKey)
      removeJobTree(childPrefix, childId, true, jobKey, prefix, maxLens)
    end
  end
  local prev = removeFromAnyState(prefix, jobId, fields[4], fields[5] or nil)
  releaseDeduplicationKey(prefix, jobId, fields[3])
  if removeJobKeys(jobKey) > 0 then
    local maxLen = maxLens[prefix] or eventsMaxLen(prefix .. "meta")
    maxLens[prefix] = maxLen
    redis.call("XADD", prefix .. "events", "MAXLEN", "~", maxLen, "*", "event", "removed", "jobId", jobId,
      "prev", prev)
  end
end
