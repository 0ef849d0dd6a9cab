#!lua flags=allow-key-locking
--[[
pauseQueue: Pauses or resumes a queue as BullMQ 6 does: only meta.paused changes, jobs stay in wait.
A resume first moves a legacy (5.x) paused list into wait, at most 20,000 entries a call, newest
first onto the end of wait that workers take from, so that the oldest end up first in line. The queue
stays paused until the last entry has moved (no worker takes a job in between, so the moved entries
keep their order across calls); the caller goes on ("2") while `left` is above 0, and stops when a
pause came in between (meta `nq:resuming` gone).

KEYS
  meta  {P}meta
  marker  {P}marker
  events  {P}events
  wait  {P}wait
  legacyPaused  {P}paused (5.x leftovers, moved back to wait on resume)
  prioritized  {P}prioritized
  delayed  {P}delayed
  attention  <prefix>:nq:due, the sweeper's attention index: the queue is noted for its next pass
ARGV
  pause  "0"|"1"|"2"  "1" to pause, "0" to resume, "2" to go on with a resume that answered `left` above 0
REPLY
  changed  int  1 when the state changed, 0 when it already was as asked or a resume is not done yet
  left  int  entries still in the legacy paused list (a resume to repeat while above 0)
EVENTS
  paused or resumed
]]
-- @include noteAttention
-- @include setDelayedMarker
local paused = redis.call("HEXISTS", KEYS[KEY.meta], "paused") == 1
if ARGV[ARG.pause] == "1" then
  -- A pause ends a resume still moving a legacy list: the queue stays paused.
  redis.call("HDEL", KEYS[KEY.meta], "nq:resuming")
  if paused then return { 0, 0 } end
  redis.call("HSET", KEYS[KEY.meta], "paused", 1)
  redis.call("DEL", KEYS[KEY.marker])
  redis.call("XADD", KEYS[KEY.events], "*", "event", "paused")
  noteAttention(KEYS[KEY.attention], string.sub(KEYS[KEY.meta], 1, -5), 0)
  return { 1, 0 }
end
if not paused then return { 0, 0 } end
local goOn = ARGV[ARG.pause] == "2"
if goOn and redis.call("HEXISTS", KEYS[KEY.meta], "nq:resuming") == 0 then return { 0, 0 } end
if redis.call("EXISTS", KEYS[KEY.legacyPaused]) == 1 then
  if redis.call("EXISTS", KEYS[KEY.wait]) == 0 then
    redis.call("RENAME", KEYS[KEY.legacyPaused], KEYS[KEY.wait])
  else
    for _ = 1, 5 do
      local moved = redis.call("LRANGE", KEYS[KEY.legacyPaused], 0, 3999)
      if #moved == 0 then break end
      redis.call("RPUSH", KEYS[KEY.wait], unpack(moved))
      redis.call("LTRIM", KEYS[KEY.legacyPaused], #moved, -1)
    end
    local left = redis.call("LLEN", KEYS[KEY.legacyPaused])
    if left > 0 then
      redis.call("HSET", KEYS[KEY.meta], "nq:resuming", 1)
      return { 0, left }
    end
  end
end
redis.call("HDEL", KEYS[KEY.meta], "paused", "nq:resuming")
if redis.call("LLEN", KEYS[KEY.wait]) + redis.call("ZCARD", KEYS[KEY.prioritized]) > 0 then
  redis.call("ZADD", KEYS[KEY.marker], 0, "0")
else
  setDelayedMarker(KEYS[KEY.delayed], KEYS[KEY.marker])
end
redis.call("XADD", KEYS[KEY.events], "*", "event", "resumed")
noteAttention(KEYS[KEY.attention], string.sub(KEYS[KEY.meta], 1, -5), 0)
return { 1, 0 }
