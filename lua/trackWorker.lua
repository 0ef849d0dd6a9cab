--[[
trackWorker: Registers or unregisters a running worker invocation, so the sweeper invokes only as
many workers as the backlog needs beyond those already running. A registration also records the
worker's batch size and concurrency in the queue's meta, where the sweep reads them (in the read of
meta it makes anyway) to size its fan-out as the workers do, even when none is running.

KEYS
  workers  {P}nq:workers: invocation id -> when its registration expires (ms)
  meta  {P}meta: `nq:batchSize`, `nq:concurrency`, `nq:leaseMs`, `nq:limited`, the last registered
    worker's settings
ARGV
  invocation  the invocation's id
  expiresAt  when the registration lapses if never removed (ms), 0 to remove it now
  batchSize  the worker's batch size, recorded with a registration (0 records none)
  concurrency  the worker's concurrency, recorded with it
  leaseMs  the worker's lease (ms), recorded with it when above 0: handOffJob leases for as long
  limited  "1" when the worker has a rate limiter (handOffJob then hands nothing over), else "0"
REPLY
  registered  int  1
EVENTS
  none
]]
-- @include checkIntegerArgs
checkIntegerArgs("trackWorker", { "expiresAt", "batchSize", "concurrency", "leaseMs" })
local expiresAt = tonumber(ARGV[ARG.expiresAt])
if expiresAt > 0 then
  redis.call("ZADD", KEYS[KEY.workers], expiresAt, ARGV[ARG.invocation])
  if tonumber(ARGV[ARG.batchSize]) > 0 then
    -- A lease of 0 is no lease to hand over for: nq:leaseMs is only recorded when there is one.
    local lease = tonumber(ARGV[ARG.leaseMs]) > 0 and { "nq:leaseMs", ARGV[ARG.leaseMs] } or {}
    redis.call("HSET", KEYS[KEY.meta], "nq:batchSize", ARGV[ARG.batchSize],
      "nq:concurrency", ARGV[ARG.concurrency], "nq:limited", ARGV[ARG.limited] == "1" and "1" or "0",
      unpack(lease))
  end
else
  redis.call("ZREM", KEYS[KEY.workers], ARGV[ARG.invocation])
end
return 1
