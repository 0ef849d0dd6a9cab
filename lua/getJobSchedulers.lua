--[[
getJobSchedulers: Reads job schedulers with the millis of their pending iteration: one by id, a range of
the `repeat` ZSET by next run, or just how many there are.

KEYS
  schedulers  {P}repeat
ARGV
  mode  "one"|"range"|"count"  one scheduler, a range of them, or their count
  schedulerId  string  the id (one)
  start  int  first index (range, 0-based)
  stop  int  last index (range, inclusive, -1 for the end)
  ascending  flag  "1" for the earliest first (range)
REPLY count  mode count
  count  int  the number of schedulers
REPLY none  mode one: there is no such scheduler
REPLY one  mode one
  next  int  its next run (ms)
  fields  hash  its hash
REPLY range  mode range
  schedulers  (id string, next int, fields hash)...
EVENTS
  none
GLOBAL LOCK
  It reads the hashes of the schedulers it finds in the repeat ZSET.
]]
local key, mode = KEYS[KEY.schedulers], ARGV[ARG.mode]
if mode == "count" then return redis.call("ZCARD", key) end
if mode == "one" then
  local next = redis.call("ZSCORE", key, ARGV[ARG.schedulerId])
  if not next then return {} end
  return { next, redis.call("HGETALL", key .. ":" .. ARGV[ARG.schedulerId]) }
end
local command = ARGV[ARG.ascending] == "1" and "ZRANGE" or "ZREVRANGE"
local entries = redis.call(command, key, ARGV[ARG.start], ARGV[ARG.stop], "WITHSCORES")
local out = {}
for i = 1, #entries, 2 do
  out[#out + 1] = entries[i]
  out[#out + 1] = entries[i + 1]
  out[#out + 1] = redis.call("HGETALL", key .. ":" .. entries[i])
end
return out
