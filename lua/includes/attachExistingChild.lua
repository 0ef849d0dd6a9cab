-- A custom-id job that already exists is re-added with a parent: link it to that parent instead of
-- creating it. A completed child records its return value in the parent's `:processed` (the caller
-- then checks whether the parent can be released); any other child becomes a pending dependency.
local function attachExistingChild(prefix, jobId, parentKey, parentField)
  local jobKey = prefix .. jobId
  redis.call("HSET", jobKey, "parentKey", parentKey, "parent", parentField)
  if redis.call("ZSCORE", prefix .. "completed", jobId) then
    local value = redis.call("HGET", jobKey, "returnvalue") or "null"
    redis.call("HSET", parentKey .. ":processed", jobKey, value)
    return true
  end
  redis.call("SADD", parentKey .. ":dependencies", jobKey)
  return false
end
