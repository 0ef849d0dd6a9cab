--[[
trackWorker: Registers or unregisters a running worker invocation, so the sweeper invokes only as
many workers as the backlog needs beyond those already running.

KEYS
  workers  {P}nq:workers: invocation id -> when its registration expires (ms)
ARGV
  invocation  the invocation's id
  expiresAt  when the registration lapses if never removed (ms), 0 to remove it now
RETURNS
  The number of registrations left.
EVENTS
  none
]]
local expiresAt = tonumber(ARGV[ARG.expiresAt])
if expiresAt > 0 then
  redis.call("ZADD", KEYS[KEY.workers], expiresAt, ARGV[ARG.invocation])
else
  redis.call("ZREM", KEYS[KEY.workers], ARGV[ARG.invocation])
end
return redis.call("ZCARD", KEYS[KEY.workers])
