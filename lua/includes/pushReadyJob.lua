-- Makes a job ready as BullMQ does: a job with a priority joins prioritized at priority * 2^32 plus a
-- fresh counter (FIFO within its priority); any other goes to wait, at the back (LPUSH) or, for
-- lifo, the front (RPUSH). Then the "ready" marker, unless the queue is paused or at its global
-- concurrency.
-- @include isQueuePausedOrMaxed
local function pushReadyJob(k, jobId, priority, lifo)
  if priority > 0 then
    local counter = redis.call("INCR", k.priorityCounter)
    redis.call("ZADD", k.prioritized, priority * 4294967296 + counter % 4294967296, jobId)
  elseif lifo then
    redis.call("RPUSH", k.wait, jobId)
  else
    redis.call("LPUSH", k.wait, jobId)
  end
  if not isQueuePausedOrMaxed(k.meta, k.active) then redis.call("ZADD", k.marker, 0, "0") end
end
