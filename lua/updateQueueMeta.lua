#!lua flags=allow-key-locking
--[[
updateQueueMeta: Sets or removes queue-wide settings in meta, as BullMQ's Queue.setGlobalConcurrency,
setGlobalRateLimit, removeGlobalConcurrency and removeGlobalRateLimit do (one HSET or HDEL).

KEYS
  meta  {P}meta
ARGV
  remove  flag  "1" to remove the fields, "" to set them
ARGV repeated fields
  field  "concurrency"|"max"|"duration"  the meta field
  value  int  its value (ignored when removing)
REPLY
  count  int  HSET's or HDEL's answer
EVENTS
  none
]]
local names, values = {}, {}
for i = 1, ARG_GROUP_COUNT do
  local field = groupArg(i, ARG_GROUP.field)
  names[#names + 1] = field
  values[#values + 1] = field
  values[#values + 1] = groupArg(i, ARG_GROUP.value)
end
if ARGV[ARG.remove] == "1" then return redis.call("HDEL", KEYS[KEY.meta], unpack(names)) end
return redis.call("HSET", KEYS[KEY.meta], unpack(values))
