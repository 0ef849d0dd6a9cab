-- Takes a parent out of waiting-children (or delayed) and puts it at the head of wait, whatever is
-- still pending: the "continue parent on failure" path, and a failParentOnFailure parent that the
-- next worker must fail with its `defa` reason. A grouped parent goes through its queue's group inbox.
-- @include isQueuePausedOrMaxed
local function moveParentToWaitNow(parentPrefix, parentId, parentKey)
  local moved = redis.call("ZREM", parentPrefix .. "waiting-children", parentId) == 1
  local grouped = redis.call("HGET", parentKey, "gid")
  local delayedKey = parentPrefix .. (grouped and "nq:gdelayed" or "delayed")
  if not moved and redis.call("ZREM", delayedKey, parentId) == 1 then
    redis.call("HSET", parentKey, "delay", 0)
    moved = true
  end
  if not moved then return false end
  if grouped then
    -- A grouped parent: through the group inbox into its group (drainGroupInbox).
    redis.call("RPUSH", parentPrefix .. "nq:ginbox", parentId)
    redis.call("HSET", parentPrefix .. "meta", "nq:groups", 1, "nq:ginbox", 1)
  else
    redis.call("RPUSH", parentPrefix .. "wait", parentId)
  end
  if not isQueuePausedOrMaxed(parentPrefix .. "meta", parentPrefix .. "active") then
    redis.call("ZADD", parentPrefix .. "marker", 0, "0")
  end
  redis.call("XADD", parentPrefix .. "events", "*", "event", "waiting", "jobId", parentId, "prev", "waiting-children")
  return true
end
