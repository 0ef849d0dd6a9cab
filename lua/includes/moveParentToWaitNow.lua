-- Takes a parent out of waiting-children (or delayed) and puts it at the head of wait, whatever is
-- still pending: the "continue parent on failure" path, and a failParentOnFailure parent that the
-- next worker must fail with its `defa` reason.
-- @include isQueuePausedOrMaxed
local function moveParentToWaitNow(parentPrefix, parentId, parentKey)
  local moved = redis.call("ZREM", parentPrefix .. "waiting-children", parentId) == 1
  if not moved and redis.call("ZREM", parentPrefix .. "delayed", parentId) == 1 then
    redis.call("HSET", parentKey, "delay", 0)
    moved = true
  end
  if not moved then return false end
  redis.call("RPUSH", parentPrefix .. "wait", parentId)
  if not isQueuePausedOrMaxed(parentPrefix .. "meta", parentPrefix .. "active") then
    redis.call("ZADD", parentPrefix .. "marker", 0, "0")
  end
  redis.call("XADD", parentPrefix .. "events", "*", "event", "waiting", "jobId", parentId, "prev", "waiting-children")
  return true
end
