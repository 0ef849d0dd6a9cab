#!lua flags=allow-key-locking
--[[
trackWorker: Registers or unregisters a running worker invocation, so the sweeper invokes only as
many workers as the backlog needs beyond those already running. A registration also records the
worker's settings in the queue's meta, one place for each queue fact: its batch size and concurrency
(the sweep reads them, in the read of meta it makes anyway, to size its fan-out as the workers do),
its lease and whether it has a limiter (for handOffJob), its events level and events stream cap.

KEYS
  workers  {P}nq:workers: invocation id -> when its registration expires (ms)
  meta  {P}meta: `nq:batchSize`, `nq:concurrency`, `nq:leaseMs`, `nq:limited`, `nq:events`,
    `opts.maxLenEvents`, the last registered worker's settings
ARGV
  invocation  string  the invocation's id
  expiresAt  int  when the registration lapses if never removed (ms), 0 to remove it now
  batchSize  int  the worker's batch size, recorded with a registration (0 records none)
  concurrency  int  the worker's concurrency, recorded with it
  leaseMs  int  the worker's lease (ms), recorded with it when above 0: handOffJob leases for as long
  limited  flag  "1" when the worker has a rate limiter (handOffJob then hands nothing over), else ""
  events  "all"|"final"|"none"|""  the worker's events level, recorded as nq:events; "" records none
  maxLenEvents  int  the worker's events stream cap, recorded as BullMQ's opts.maxLenEvents (the sweeper
    trims by it); 0 records none
REPLY
  registered  int  1
EVENTS
  none
]]
-- @include checkIntegerArgs
checkIntegerArgs("trackWorker", { "expiresAt", "batchSize", "concurrency", "leaseMs", "maxLenEvents" })
local expiresAt = tonumber(ARGV[ARG.expiresAt])
if expiresAt > 0 then
  redis.call("ZADD", KEYS[KEY.workers], expiresAt, ARGV[ARG.invocation])
  if tonumber(ARGV[ARG.batchSize]) > 0 then
    local fields = { "nq:batchSize", ARGV[ARG.batchSize], "nq:concurrency", ARGV[ARG.concurrency],
      "nq:limited", ARGV[ARG.limited] == "1" and "1" or "0" }
    -- A lease of 0 is no lease to hand over for: nq:leaseMs is only recorded when there is one.
    if tonumber(ARGV[ARG.leaseMs]) > 0 then
      fields[#fields + 1] = "nq:leaseMs"; fields[#fields + 1] = ARGV[ARG.leaseMs]
    end
    if ARGV[ARG.events] ~= "" then
      fields[#fields + 1] = "nq:events"; fields[#fields + 1] = ARGV[ARG.events]
    end
    if tonumber(ARGV[ARG.maxLenEvents]) > 0 then
      fields[#fields + 1] = "opts.maxLenEvents"; fields[#fields + 1] = ARGV[ARG.maxLenEvents]
    end
    redis.call("HSET", KEYS[KEY.meta], unpack(fields))
  end
else
  redis.call("ZREM", KEYS[KEY.workers], ARGV[ARG.invocation])
end
return 1
