-- The parent queue's key prefix `<prefix>:<queue>:`, from a child's `parent` field (JSON naming the
-- queue as queueKey); nil without one.
local function parentPrefixOf(parentField)
  local queueKey = string.match(parentField or "", '"queueKey":"([^"]*)"')
  return queueKey and queueKey .. ":" or nil
end
