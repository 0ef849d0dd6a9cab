-- Points the marker's member "1" at the earliest delayed job's due time (its score / 4096), which is
-- what an idle BullMQ worker blocks until.
local function setDelayedMarker(delayedKey, markerKey)
  local first = redis.call("ZRANGE", delayedKey, 0, 0, "WITHSCORES")
  if first[2] then
    redis.call("ZADD", markerKey, tonumber(first[2]) / 4096, "1")
  end
end
