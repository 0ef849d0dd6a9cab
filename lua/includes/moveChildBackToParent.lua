-- BullMQ's moveChildBackToParentDependencies: a retried child (out of `state`, failed or completed)
-- is pending again for its parent — taken out of the parent's `:unsuccessful`/`:failed` or
-- `:processed` record —, but a parent that already left waiting-children is not moved back there.
local function moveChildBackToParent(jobKey, parentKey, state)
  if not parentKey or redis.call("EXISTS", parentKey) == 0 then return end
  local recorded
  if state == "failed" then
    recorded = redis.call("ZREM", parentKey .. ":unsuccessful", jobKey) == 1
      or redis.call("HDEL", parentKey .. ":failed", jobKey) == 1
  else
    recorded = redis.call("HDEL", parentKey .. ":processed", jobKey) == 1
  end
  if recorded then redis.call("SADD", parentKey .. ":dependencies", jobKey) end
end
