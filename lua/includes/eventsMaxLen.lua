-- The events stream's approximate cap a queue's meta records (`opts.maxLenEvents`), or BullMQ's
-- default of 10000 when there is none or it is no count (XADD would refuse it after the caller's
-- first write): scripts that read meta anyway trim with it.
local function eventsMaxLen(metaKey)
  local cap = redis.call("HGET", metaKey, "opts.maxLenEvents")
  if cap and string.find(cap, "^%d+$") then return cap end
  return "10000"
end
