--[[
abortStagedJobs: One step of undoing a staged add that will not commit (a chunk was refused, or a call
failed): unless the add committed, deletes its staging record first (so a late commit finds it
partial and writes nothing), then up to `count` staged job hashes, and once none is left the rest of
the staging. What an abort does not reach expires by itself. Safe to repeat.

KEYS
  replayGuard  the add's replay guard, <prefix>:nq-req:<queue>:<token> (set by its commit)
  stage  the add's staging record
  stagedKeys  <stage>:keys
  stagedCustomKeys  <stage>:custom-keys
  parents  <stage>:parents
KEYS repeated queues
  stagedWait  <stage>:<n>:wait
  stagedLifo  <stage>:<n>:lifo
  stagedPrioritized  <stage>:<n>:prioritized
  stagedDelayed  <stage>:<n>:delayed
  stagedWaitingChildren  <stage>:<n>:waiting-children
ARGV
  count  int  most job hashes this step deletes
REPLY step
  left  int  0 the staging is gone, 1 hashes are left for another step
REPLY committed  the add committed: nothing is deleted
  code  code
CODES
  committed  -1  the add committed
EVENTS
  none
GLOBAL LOCK
  It deletes the staged hashes it reads from the stage's lists and builds each parent's
  staged-dependencies key from `stage`: their keys are known only inside.
]]
-- @include checkIntegerArgs

checkIntegerArgs("abortStagedJobs", { "count" })
if redis.call("EXISTS", KEYS[KEY.replayGuard]) == 1 then return -1 end
redis.call("DEL", KEYS[KEY.stage])
local budget = tonumber(ARGV[ARG.count])
for _, list in ipairs({ KEYS[KEY.stagedKeys], KEYS[KEY.stagedCustomKeys] }) do
  local keys = redis.call("LRANGE", list, 0, budget - 1)
  for from = 1, #keys, 4000 do redis.call("DEL", unpack(keys, from, math.min(from + 3999, #keys))) end
  redis.call("LTRIM", list, #keys, -1)
  if redis.call("LLEN", list) > 0 then return 1 end
  budget = budget - #keys
  if budget <= 0 then return 1 end
end
local dropped = { KEYS[KEY.parents], KEYS[KEY.stagedKeys], KEYS[KEY.stagedCustomKeys] }
for _, parentKey in ipairs(redis.call("HKEYS", KEYS[KEY.parents])) do
  table.insert(dropped, KEYS[KEY.stage] .. ":deps:" .. parentKey)
end
for i = KEY_GROUP.first, #KEYS do table.insert(dropped, KEYS[i]) end
for from = 1, #dropped, 4000 do redis.call("DEL", unpack(dropped, from, math.min(from + 3999, #dropped))) end
return 0
