--[[
getJobStates: Reads the state of each given job, checking BullMQ's structures in getState's order.

KEYS
  completed  {P}completed
  failed  {P}failed
  delayed  {P}delayed
  prioritized  {P}prioritized
  active  {P}active
  wait  {P}wait
  legacyPaused  {P}paused
  waitingChildren  {P}waiting-children
ARGV
  prefix  the queue key prefix {P} to also return each job's hash, or "" for states only
ARGV repeated jobs
  id  a job id
REPLY states  without a prefix
  states  string...  per job: completed, failed, delayed, prioritized, active, waiting,
    waiting-children or unknown
REPLY withFields  with a prefix: each state with its job's fields, read together so they agree
  jobs  (state string, fields hash)...
EVENTS
  none
]]
local states = {}
for i = 1, ARG_GROUP_COUNT do
  local id = groupArg(i, ARG_GROUP.id)
  local state = "unknown"
  if redis.call("ZSCORE", KEYS[KEY.completed], id) then state = "completed"
  elseif redis.call("ZSCORE", KEYS[KEY.failed], id) then state = "failed"
  elseif redis.call("ZSCORE", KEYS[KEY.delayed], id) then state = "delayed"
  elseif redis.call("ZSCORE", KEYS[KEY.prioritized], id) then state = "prioritized"
  elseif redis.call("LPOS", KEYS[KEY.active], id) then state = "active"
  elseif redis.call("LPOS", KEYS[KEY.wait], id) then state = "waiting"
  elseif redis.call("LPOS", KEYS[KEY.legacyPaused], id) then state = "waiting"
  elseif redis.call("ZSCORE", KEYS[KEY.waitingChildren], id) then state = "waiting-children"
  end
  if ARGV[ARG.prefix] ~= "" then
    states[#states + 1] = state
    states[#states + 1] = redis.call("HGETALL", ARGV[ARG.prefix] .. id)
  else
    states[i] = state
  end
end
return states
