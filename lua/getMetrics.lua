#!lua flags=no-writes,allow-key-locking
--[[
getMetrics: Reads the metrics a BullMQ worker with `metrics` on keeps for completed or failed jobs,
as BullMQ's Queue.getMetrics: the counters hash, a range of per-minute points (newest first) and how
many points there are.
Read-only with every key declared: Upstash takes shared read locks on these keys alone.

KEYS
  metrics  {P}metrics:completed or {P}metrics:failed
  data  {P}metrics:completed:data or {P}metrics:failed:data
ARGV
  start  int  first point (0 is the newest)
  stop  int  last point (-1 is the oldest)
REPLY
  counters  {(count string?, prevTS string?, prevCount string?)}  the metrics hash's fields
  points  {string...}  the points asked for
  pointCount  int  the number of points
EVENTS
  none
]]
return {
  redis.call("HMGET", KEYS[KEY.metrics], "count", "prevTS", "prevCount"),
  redis.call("LRANGE", KEYS[KEY.data], ARGV[ARG.start], ARGV[ARG.stop]),
  redis.call("LLEN", KEYS[KEY.data]),
}
