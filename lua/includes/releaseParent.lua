-- Moves a parent out of its queue's waiting-children set once nothing is pending: to delayed (its
-- own delay counted from now, with a `delayed` event and the delay marker), or to prioritized or the
-- head of wait (RPUSH) with a marker and a `waiting prev waiting-children` event, all on the parent's
-- queue (BullMQ's moveParentToWait: a delayed parent gets no `waiting` event). No-op when it is not
-- waiting there. A grouped parent (gid) goes to nimbusq's grouped structures instead.
-- @include pushReadyJob
-- @include setDelayedMarker
local function releaseParent(parentPrefix, parentId, parentKey, now)
  if redis.call("ZREM", parentPrefix .. "waiting-children", parentId) == 0 then return end
  local fields = redis.call("HMGET", parentKey, "delay", "priority", "gid")
  local delay = tonumber(fields[1]) or 0
  local priority = tonumber(fields[2]) or 0
  local events = parentPrefix .. "events"
  if fields[3] then
    -- A grouped parent: to nimbusq's grouped delayed set, or to the group inbox the next lease (or
    -- sweep) empties into its group (this call may not name the group's key).
    if delay > 0 then
      redis.call("ZADD", parentPrefix .. "nq:gdelayed", (now + delay) * 4096, parentId)
      redis.call("HSET", parentPrefix .. "meta", "nq:groups", 1)
      redis.call("XADD", events, "*", "event", "delayed", "jobId", parentId, "delay", now + delay)
    else
      redis.call("RPUSH", parentPrefix .. "nq:ginbox", parentId)
      redis.call("HSET", parentPrefix .. "meta", "nq:groups", 1, "nq:ginbox", 1)
      redis.call("XADD", events, "*", "event", "waiting", "jobId", parentId, "prev", "waiting-children")
    end
  elseif delay > 0 then
    local due = now + delay
    -- BullMQ scores a released parent at exactly due * 4096 (no sequence number).
    redis.call("ZADD", parentPrefix .. "delayed", due * 4096, parentId)
    redis.call("XADD", events, "*", "event", "delayed", "jobId", parentId, "delay", due)
    setDelayedMarker(parentPrefix .. "delayed", parentPrefix .. "marker")
  else
    local k = { wait = parentPrefix .. "wait", prioritized = parentPrefix .. "prioritized",
      priorityCounter = parentPrefix .. "pc", meta = parentPrefix .. "meta", active = parentPrefix .. "active",
      marker = parentPrefix .. "marker" }
    -- A released parent goes to the front of the line (RPUSH), as in BullMQ.
    pushReadyJob(k, parentId, priority, true)
    redis.call("XADD", events, "*", "event", "waiting", "jobId", parentId, "prev", "waiting-children")
  end
end
