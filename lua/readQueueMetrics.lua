--[[
readQueueMetrics: The sweeper's metrics read, one call for every queue of a pass: each queue's
counts, whether it is paused, its dead-letter queue's depth, when its oldest waiting job was added,
and the jobs nimbusq workers completed and failed since the last read (counted by the worker calls
in {P}nq:counts, which this read creates and resets). Eight reads per queue when idle, plus two when
jobs wait (the oldest's id and timestamp) and one when the counters moved or are new (the reset).
Not flagged no-writes: it moves the finish counters it reports.

KEYS repeated queues
  wait  {P}wait
  active  {P}active
  prioritized  {P}prioritized
  delayed  {P}delayed
  failed  {P}failed
  meta  {P}meta
  deadLetterWait  the dead-letter queue's wait list (<queue>-dlq by default)
  counts  {P}nq:counts: completed, failed (HINCRBY by the worker calls once it exists)
REPLY
  queues  {(waiting int, prioritized int, delayed int, active int, failed int, paused int,
    deadLetterDepth int, oldestWaitingTimestamp int, completedSinceLastRead int,
    failedSinceLastRead int)}...  one per queue: paused 0/1, oldestWaitingTimestamp in ms (0 for none)
EVENTS
  none
GLOBAL LOCK
  It reads the timestamp of each queue's oldest waiting job, whose hash is named by the id it finds at
  the end of wait.
]]
local out = {}
for g = 1, KEY_GROUP_COUNT do
  local wait = groupKey(g, KEY_GROUP.wait)
  local counts = groupKey(g, KEY_GROUP.counts)
  local waiting = redis.call("LLEN", wait)
  local oldest = 0
  if waiting > 0 then
    -- Jobs are pushed on the left and taken from the right: the right end waited longest.
    local id = redis.call("LINDEX", wait, -1)
    if id then oldest = tonumber(redis.call("HGET", string.sub(wait, 1, -5) .. id, "timestamp")) or 0 end
  end
  local paused = 0
  if redis.call("HEXISTS", groupKey(g, KEY_GROUP.meta), "paused") == 1 then paused = 1 end
  local finished = redis.call("HMGET", counts, "completed", "failed")
  local completed, failed = tonumber(finished[1]) or 0, tonumber(finished[2]) or 0
  -- Made on the first read (the worker calls count only into an existing hash), zeroed after a count.
  if not finished[1] or completed + failed > 0 then redis.call("HSET", counts, "completed", 0, "failed", 0) end
  out[g] = { waiting, redis.call("ZCARD", groupKey(g, KEY_GROUP.prioritized)),
    redis.call("ZCARD", groupKey(g, KEY_GROUP.delayed)), redis.call("LLEN", groupKey(g, KEY_GROUP.active)),
    redis.call("ZCARD", groupKey(g, KEY_GROUP.failed)), paused,
    redis.call("LLEN", groupKey(g, KEY_GROUP.deadLetterWait)), oldest, completed, failed }
end
return out
