-- Splits a job key `<prefix>:<queue>:<id>` into the queue's key prefix and the id. An id holds no
-- ":" or exactly two, so a key of five or more segments may end in a three-segment id: it is read
-- that way when the queue that reading names exists (has an id counter or an events stream), and
-- otherwise the last segment is the id (BullMQ always takes the last segment).
local function splitJobKey(key)
  local prefix3, id3 = string.match(key, "^(.+:[^:]+:)([^:]+:[^:]+:[^:]+)$")
  if prefix3 and redis.call("EXISTS", prefix3 .. "id", prefix3 .. "events") > 0 then
    return prefix3, id3
  end
  local prefix, id = string.match(key, "^(.*:)([^:]*)$")
  return prefix, id
end
