#!lua flags=allow-key-locking
--[[
releaseHandoff: Undoes a handoff whose worker invocation could not be started (the Invoke failed):
while the job's lock still holds the handed-over token, the job goes back to the front of wait with
its lease's processedOn/ats/nq:ho removed, and the invocation leaves the worker registry; the queue is
noted for the sweeper's next pass, which starts a worker. A lock that changed (the job was taken
since) is left alone.

KEYS
  job  the job's hash, {P}<id>
  lock  its lock, {P}<id>:lock
  active  {P}active
  wait  {P}wait
  stalled  {P}stalled
  workers  {P}nq:workers
  marker  {P}marker
  events  {P}events
  attention  <prefix>:nq:due, the sweeper's attention index
ARGV
  jobId  string  the job's id
  token  string  the handed-over lock token
  invocation  string  the invocation's registry id
  now  int  the caller's clock (ms)
  events  int  which events to write: 2 all (waiting prev active), 1 or 0 none
REPLY
  released  int  1 released, 0 the lock is no longer the handed-over one (nothing done)
EVENTS
  with events 2: waiting prev active
]]
-- @include checkIntegerArgs
-- @include noteAttention
checkIntegerArgs("releaseHandoff", { "now", "events" })
if redis.call("GET", KEYS[KEY.lock]) ~= ARGV[ARG.token] then return 0 end
local id = ARGV[ARG.jobId]
redis.call("DEL", KEYS[KEY.lock])
redis.call("LREM", KEYS[KEY.active], -1, id)
redis.call("HDEL", KEYS[KEY.job], "nq:ho", "ats", "processedOn")
redis.call("SREM", KEYS[KEY.stalled], id)
redis.call("RPUSH", KEYS[KEY.wait], id)
redis.call("ZADD", KEYS[KEY.marker], 0, "0")
redis.call("ZREM", KEYS[KEY.workers], ARGV[ARG.invocation])
if tonumber(ARGV[ARG.events]) >= 2 then
  redis.call("XADD", KEYS[KEY.events], "*", "event", "waiting", "jobId", id, "prev", "active")
end
noteAttention(KEYS[KEY.attention], string.sub(KEYS[KEY.job], 1, -(#id + 1)), tonumber(ARGV[ARG.now]))
return 1
