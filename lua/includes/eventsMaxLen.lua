-- The events stream's approximate cap a queue's meta records (`opts.maxLenEvents`), or BullMQ's
-- default of 10000: scripts that read meta anyway trim with it.
local function eventsMaxLen(metaKey)
  return redis.call("HGET", metaKey, "opts.maxLenEvents") or "10000"
end
