#!lua flags=allow-key-locking
--[[
extendLeases: Extends the locks of every job a worker holds (running, waiting for a slot, or finished
and not yet acked), in one call under Upstash's key-based locking: every lock is declared. A job whose
lock is gone or owned by another token is reported lost (the worker then never writes its result).

KEYS
  stalled  {P}stalled
KEYS repeated locks
  lock  the job's {P}<id>:lock
ARGV
  leaseMs  int  new lock time-to-live (ms)
ARGV repeated jobs
  id  string  job id
  token  string  the lock token the job was leased with
REPLY
  codes  int...  per job: 1 extended, 0 lost
EVENTS
  none
]]
local leaseMs = ARGV[ARG.leaseMs]
if ARG_GROUP_COUNT == 0 then return {} end
local lockKeys = {}
for i = 1, ARG_GROUP_COUNT do lockKeys[i] = groupKey(i, KEY_GROUP.lock) end
local locks = redis.call("MGET", unpack(lockKeys))
local codes, kept = {}, {}
for i = 1, ARG_GROUP_COUNT do
  local token = groupArg(i, ARG_GROUP.token)
  if locks[i] == token then
    redis.call("SET", lockKeys[i], token, "PX", leaseMs)
    kept[#kept + 1] = groupArg(i, ARG_GROUP.id)
    codes[i] = 1
  else
    codes[i] = 0
  end
end
if #kept > 0 then redis.call("SREM", KEYS[KEY.stalled], unpack(kept)) end
return codes
