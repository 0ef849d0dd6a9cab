-- Parent bookkeeping when a child finishes for good. Completed: the child's return value goes to
-- the parent's `:processed` and the parent is released when nothing is pending. Failed: the child's
-- `parent` policy decides — fpof fails the parent (`defa`, moved to wait), cpof releases it at once,
-- idof records the failure and releases it when nothing is pending, rdof just drops the dependency;
-- with no policy the parent keeps waiting.
-- @include releaseParent
-- @include moveParentToWaitNow
local function settleParent(job, jobKey, failed, value, now)
  local parentKey, parentPrefix, policy = job.parentKey, job.parentPrefix, job.parentPolicy
  local parentId = string.sub(parentKey, #parentPrefix + 1)
  if failed and policy == "" then return end
  local wasPending = redis.call("SREM", parentKey .. ":dependencies", jobKey) == 1
  if not failed then
    if wasPending then redis.call("HSET", parentKey .. ":processed", jobKey, value) end
  elseif policy == "fpof" then
    redis.call("ZADD", parentKey .. ":unsuccessful", now, jobKey)
    if redis.call("EXISTS", parentKey) == 1 and not redis.call("ZSCORE", parentPrefix .. "failed", parentId) then
      redis.call("HSET", parentKey, "defa", "child " .. jobKey .. " failed")
      moveParentToWaitNow(parentPrefix, parentId, parentKey)
    end
    return
  elseif policy == "cpof" then
    redis.call("HSET", parentKey .. ":failed", jobKey, value)
    moveParentToWaitNow(parentPrefix, parentId, parentKey)
    return
  elseif policy == "idof" then
    redis.call("HSET", parentKey .. ":failed", jobKey, value)
  end
  if redis.call("SCARD", parentKey .. ":dependencies") == 0 then
    releaseParent(parentPrefix, parentId, parentKey, now)
  end
end
