--[[
getJobsInRange: One page of Queue.getJobs: lists jobs of the named structures, each in BullMQ's getJobs
order, with their hashes, from the given index of the first structure on, until the ranges end or the
page is full — `maxIds` jobs read or `maxBytes` bytes of hashes answered, whichever comes first (at
least one job), so a call over a large range holds Redis briefly. For lists "ascending" starts at the
right end (processing order); for sets at the lowest score.

KEYS repeated structures
  key  {P}wait, {P}active or one of the job ZSETs
ARGV
  prefix  string  the queue key prefix {P}
  ascending  flag  "1" for ascending
  maxIds  int  most jobs this page reads
  maxBytes  int  the size of the hashes (field and value bytes) after which the page stops
ARGV repeated structures
  kind  "list"|"zset"  the structure's type
  start  int  first index of the structure's range (0-based) still to read
  stop  int  last index of its range (inclusive, -1 for the end)
REPLY
  next  int  the structure (1-based) the following page starts at, 0 when the ranges are done
  nextStart  int  where in that structure's range it starts
  jobs  (jobId string, fields hash)...  a job whose hash is gone has no fields
EVENTS
  none
GLOBAL LOCK
  It reads the hashes of the jobs it finds in the structures it lists.
]]
local ascending = ARGV[ARG.ascending] == "1"
local maxIds, maxBytes = tonumber(ARGV[ARG.maxIds]), tonumber(ARGV[ARG.maxBytes])
local prefix = ARGV[ARG.prefix]
local out, read, bytes = { 0, 0 }, 0, 0

local function range(key, kind, from, to)
  if kind == "list" then
    if not ascending then return redis.call("LRANGE", key, from, to) end
    local ids, reversed = redis.call("LRANGE", key, -1 - to, -1 - from), {}
    for j = #ids, 1, -1 do reversed[#reversed + 1] = ids[j] end
    return reversed
  elseif ascending then
    return redis.call("ZRANGE", key, from, to)
  end
  return redis.call("ZREVRANGE", key, from, to)
end

for i = 1, KEY_GROUP_COUNT do
  local start, stop = tonumber(groupArg(i, ARG_GROUP.start)), tonumber(groupArg(i, ARG_GROUP.stop))
  if stop == -1 or stop >= start then
    if read >= maxIds or bytes >= maxBytes then
      out[1], out[2] = i, start
      return out
    end
    local room = maxIds - read
    local to = (stop == -1 or stop - start + 1 > room) and start + room - 1 or stop
    local ids = range(groupKey(i, KEY_GROUP.key), groupArg(i, ARG_GROUP.kind), start, to)
    for j, id in ipairs(ids) do
      if bytes >= maxBytes then
        out[1], out[2] = i, start + j - 1
        return out
      end
      local hash = redis.call("HGETALL", prefix .. id)
      for _, text in ipairs(hash) do bytes = bytes + #text end
      out[#out + 1] = id
      out[#out + 1] = hash
      read = read + 1
    end
    -- A full page that stopped short of the range's end: the rest waits for the next page.
    if #ids == to - start + 1 and to ~= stop then
      out[1], out[2] = i, to + 1
      return out
    end
  end
end
return out
