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
ARGV repeated jobs
  id  a job id
RETURNS
  One state name per job: completed, failed, delayed, prioritized, active, waiting,
  waiting-children or unknown.
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
  states[i] = state
end
return states
