--[[
readGroups: Reads the queue's groups (BullMQ Pro's group getters): the given ones, or every group that
has ready jobs, is paused, rate-limited or has jobs running, sorted by id, from `start` to `stop`.

KEYS
  ring  {P}nq:groups
  paused  {P}nq:gpaused
  running  {P}nq:grun
ARGV
  prefix  string  the queue key prefix {P}
  ids  string  the group ids to read (encodeIds), or "" for every known group
  start  int  first index of the sorted list (0-based)
  stop  int  last index, -1 for the end
REPLY
  total  int  how many groups the list had before the range
  groups  (groupId string, ready int, running int, paused int, inRing int, limitedUntil int)...  each
    group in range: its ready jobs, its running jobs, 1 when paused, 1 when in the ring (served in
    turn), when its rate limit ends (ms, 0 for none)
EVENTS
  none
GLOBAL LOCK
  It reads the keys of the groups it finds in the ring, the paused set and the running counts.
]]
-- @include checkIntegerArgs
-- @include decodeIds
-- @include groupKeys
-- @include knownGroups
checkIntegerArgs("readGroups", { "start", "stop" })
local ids = decodeIds(ARGV[ARG.ids])
if ARGV[ARG.ids] == "" then
  ids = knownGroups(groupKeys(ARGV[ARG.prefix]))
  table.sort(ids)
end
local total = #ids
local first, last = tonumber(ARGV[ARG.start]), tonumber(ARGV[ARG.stop])
if last < 0 then last = total + last end
local out = { total }
for i = first + 1, math.min(last + 1, total) do
  local gid = ids[i]
  out[#out + 1] = gid
  out[#out + 1] = redis.call("ZCARD", ARGV[ARG.prefix] .. "nq:g:" .. gid)
  out[#out + 1] = tonumber(redis.call("HGET", KEYS[KEY.running], gid)) or 0
  out[#out + 1] = redis.call("SISMEMBER", KEYS[KEY.paused], gid)
  out[#out + 1] = redis.call("ZSCORE", KEYS[KEY.ring], gid) and 1 or 0
  out[#out + 1] = tonumber(redis.call("ZSCORE", ARGV[ARG.prefix] .. "nq:glimited", gid)) or 0
end
return out
