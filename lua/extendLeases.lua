#!lua flags=allow-key-locking
--[[
extendLeases: Extends the locks of every job a worker holds (running, waiting for a slot, or finished
and not yet acked), in one call under Upstash's key-based locking: every lock is declared. A job whose
lock is gone or owned by another token is reported lost (the worker then never writes its result). A
lock cancelJob marked for the job's token (`<token>|cancel|<reason>`) is extended with its mark and
reported cancelled with the reason, read from the lock this call reads anyway: a cancel costs the
jobs that are not cancelled nothing.

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
  codes  {int...}  per job: 1 extended, 0 lost, 2 extended and cancelled
  reasons  string...  the cancel's reason of each job coded 2, in order
OUTCOMES
  lost  0  the lock is gone or another token's
  extended  1  extended
  cancelled  2  extended, and cancelled: the worker aborts the job's signal
EVENTS
  none
]]
-- @include holdsLock
local leaseMs = ARGV[ARG.leaseMs]
if ARG_GROUP_COUNT == 0 then return { {} } end
local lockKeys = {}
for i = 1, ARG_GROUP_COUNT do lockKeys[i] = groupKey(i, KEY_GROUP.lock) end
local locks = redis.call("MGET", unpack(lockKeys))
local codes, kept = {}, {}
local out = { codes }
for i = 1, ARG_GROUP_COUNT do
  local token = groupArg(i, ARG_GROUP.token)
  if holdsLock(locks[i], token) then
    redis.call("SET", lockKeys[i], locks[i], "PX", leaseMs)
    kept[#kept + 1] = groupArg(i, ARG_GROUP.id)
    local reason = cancelReason(locks[i], token)
    codes[i] = reason and 2 or 1
    if reason then out[#out + 1] = reason end
  else
    codes[i] = 0
  end
end
if #kept > 0 then redis.call("SREM", KEYS[KEY.stalled], unpack(kept)) end
return out
