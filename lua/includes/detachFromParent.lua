-- Unlinks a job being removed from its parent (given by key and queue prefix): the job leaves
-- the parent's pending dependencies, and a parent left with nothing pending leaves waiting-children.
-- Soft (job.remove): that parent goes to the end of wait with a marker and a `waiting prev
-- waiting-children` event. Hard (clean, drain, obliterate; BullMQ's removeParentDependencyKey with
-- hard set): a parent in the job's own queue is deleted too (and unlinked from its own parent the
-- same way), one in another queue goes to wait with no event.
-- @include isQueuePausedOrMaxed
-- @include releaseDeduplicationKey
-- @include removeJobKeys
-- @include parentPrefixOf
local function detachFromParent(jobKey, parentKey, parentPrefix, hard, basePrefix)
  if not parentKey or not parentPrefix or redis.call("EXISTS", parentKey) == 0 then return end
  local dependencies = parentKey .. ":dependencies"
  if redis.call("SREM", dependencies, jobKey) == 0 or redis.call("SCARD", dependencies) > 0 then return end
  local parentId = string.sub(parentKey, #parentPrefix + 1)
  if redis.call("ZREM", parentPrefix .. "waiting-children", parentId) == 0 then return end
  if hard and parentPrefix == basePrefix then
    local fields = redis.call("HMGET", parentKey, "parentKey", "parent", "deid")
    detachFromParent(parentKey, fields[1], parentPrefixOf(fields[2]), true, basePrefix)
    releaseDeduplicationKey(parentPrefix, parentId, fields[3])
    removeJobKeys(parentKey)
    return
  end
  redis.call("RPUSH", parentPrefix .. "wait", parentId)
  if not isQueuePausedOrMaxed(parentPrefix .. "meta", parentPrefix .. "active") then
    redis.call("ZADD", parentPrefix .. "marker", 0, "0")
  end
  if not hard then
    redis.call("XADD", parentPrefix .. "events", "*", "event", "waiting", "jobId", parentId,
      "prev", "waiting-children")
  end
end
