#!lua flags=no-writes,allow-key-locking
--[[
getJobCounts: Counts the jobs in each named structure of one queue.
Read-only with every key declared: Upstash takes shared read locks on these keys alone.

KEYS repeated structures
  key  {P}wait, {P}active or one of the job ZSETs
ARGV repeated structures
  kind  "list"|"zset"  the structure's type
REPLY
  counts  int...  one per structure, in order
EVENTS
  none
]]
local counts = {}
for i = 1, KEY_GROUP_COUNT do
  if groupArg(i, ARG_GROUP.kind) == "list" then
    counts[i] = redis.call("LLEN", groupKey(i, KEY_GROUP.key))
  else
    counts[i] = redis.call("ZCARD", groupKey(i, KEY_GROUP.key))
  end
end
return counts
