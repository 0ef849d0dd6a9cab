--[[
extendLeases: Extends the locks of every job a worker still runs, in one call; a job whose lock is
gone or owned by another token is reported lost (the worker then never writes its result).

KEYS
  stalled  {P}stalled
ARGV
  prefix  the queue key prefix {P}
  leaseMs  new lock time-to-live (ms)
ARGV repeated jobs
  id  job id
  token  the lock token the job was leased with
RETURNS
  One code per job: 1 extended, 0 lost.
EVENTS
  none
]]
local prefix, leaseMs = ARGV[ARG.prefix], ARGV[ARG.leaseMs]
local lockKeys, ids = {}, {}
for i = 1, ARG_GROUP_COUNT do
  ids[i] = groupArg(i, ARG_GROUP.id)
  lockKeys[i] = prefix .. ids[i] .. ":lock"
end
if #ids == 0 then return {} end
local locks = redis.call("MGET", unpack(lockKeys))
local codes, kept = {}, {}
for i = 1, #ids do
  local token = groupArg(i, ARG_GROUP.token)
  if locks[i] == token then
    redis.call("SET", lockKeys[i], token, "PX", leaseMs)
    kept[#kept + 1] = ids[i]
    codes[i] = 1
  else
    codes[i] = 0
  end
end
if #kept > 0 then redis.call("SREM", KEYS[KEY.stalled], unpack(kept)) end
return codes
