#!lua flags=no-writes,allow-key-locking
--[[
countWorkers: How many worker invocations of a queue are registered as running and not yet lapsed,
so that a kick (HTTP API, producers) can skip invoking a worker when the queue already has its
maximum. Reads only: lapsed registrations are left for the sweeper to prune.
Read-only with every key declared: Upstash takes shared read locks on these keys alone.

KEYS
  workers  {P}nq:workers: invocation id -> when its registration expires (ms)
ARGV
  now  int  the caller's clock (ms)
REPLY
  count  int  the number of registrations expiring after now
EVENTS
  none
]]
return redis.call("ZCOUNT", KEYS[KEY.workers], "(" .. ARGV[ARG.now], "+inf")
