--[[
getJobsInRange: Lists jobs of the named structures, each in BullMQ's getJobs order, with their hashes.
For lists "ascending" starts at the right end (processing order); for sets at the lowest score.

KEYS repeated structures
  key  {P}wait, {P}active or one of the job ZSETs
ARGV
  prefix  the queue key prefix {P}
  start  first index of each structure's range (0-based)
  stop  last index (inclusive, -1 for the end)
  ascending  "1" for ascending
ARGV repeated structures
  kind  list or zset
RETURNS
  A flat array {jobId, {field, value, …}, …}; jobs whose hash is gone have an empty table.
EVENTS
  none
]]
local start, stop = tonumber(ARGV[ARG.start]), tonumber(ARGV[ARG.stop])
local ascending = ARGV[ARG.ascending] == "1"
local out = {}
for i = 1, KEY_GROUP_COUNT do
  local key, ids = groupKey(i, KEY_GROUP.key), nil
  if groupArg(i, ARG_GROUP.kind) == "list" then
    if ascending then
      ids = redis.call("LRANGE", key, -1 - stop, -1 - start)
      local reversed = {}
      for j = #ids, 1, -1 do reversed[#reversed + 1] = ids[j] end
      ids = reversed
    else
      ids = redis.call("LRANGE", key, start, stop)
    end
  elseif ascending then
    ids = redis.call("ZRANGE", key, start, stop)
  else
    ids = redis.call("ZREVRANGE", key, start, stop)
  end
  for _, id in ipairs(ids) do
    out[#out + 1] = id
    out[#out + 1] = redis.call("HGETALL", ARGV[ARG.prefix] .. id)
  end
end
return out
