--[[
pauseQueue: Pauses or resumes a queue as BullMQ 6 does: only meta.paused changes, jobs stay in wait.

KEYS
  meta  {P}meta
  marker  {P}marker
  events  {P}events
  wait  {P}wait
  legacyPaused  {P}paused (5.x leftovers, moved back to wait on resume)
  prioritized  {P}prioritized
  delayed  {P}delayed
ARGV
  pause  "1" to pause, "0" to resume
REPLY
  changed  int  1 when the state changed, 0 when it already was as asked
EVENTS
  paused or resumed
]]
-- @include setDelayedMarker
local paused = redis.call("HEXISTS", KEYS[KEY.meta], "paused") == 1
if ARGV[ARG.pause] == "1" then
  if paused then return 0 end
  redis.call("HSET", KEYS[KEY.meta], "paused", 1)
  redis.call("DEL", KEYS[KEY.marker])
  redis.call("XADD", KEYS[KEY.events], "*", "event", "paused")
  return 1
end
if not paused then return 0 end
redis.call("HDEL", KEYS[KEY.meta], "paused")
if redis.call("EXISTS", KEYS[KEY.legacyPaused]) == 1 then
  if redis.call("EXISTS", KEYS[KEY.wait]) == 0 then
    redis.call("RENAME", KEYS[KEY.legacyPaused], KEYS[KEY.wait])
  else
    local moved = redis.call("LRANGE", KEYS[KEY.legacyPaused], -4000, -1)
    while #moved > 0 do
      redis.call("RPUSH", KEYS[KEY.wait], unpack(moved))
      redis.call("LTRIM", KEYS[KEY.legacyPaused], 0, -1 - #moved)
      moved = redis.call("LRANGE", KEYS[KEY.legacyPaused], -4000, -1)
    end
  end
end
if redis.call("LLEN", KEYS[KEY.wait]) + redis.call("ZCARD", KEYS[KEY.prioritized]) > 0 then
  redis.call("ZADD", KEYS[KEY.marker], 0, "0")
else
  setDelayedMarker(KEYS[KEY.delayed], KEYS[KEY.marker])
end
redis.call("XADD", KEYS[KEY.events], "*", "event", "resumed")
return 1
