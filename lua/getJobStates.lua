#!lua flags=no-writes,allow-key-locking
--[[
getJobStates: Reads the state of each given job, checking BullMQ's structures in getState's order;
with the jobs' hash keys given, their fields too. It reads and writes nothing else: read-only, every
key declared, so Upstash takes shared read locks on these keys alone.

KEYS
  completed  {P}completed
  failed  {P}failed
  delayed  {P}delayed
  prioritized  {P}prioritized
  active  {P}active
  wait  {P}wait
  legacyPaused  {P}paused
  waitingChildren  {P}waiting-children
  groupDelayed  {P}nq:gdelayed, nimbusq's grouped delayed jobs (a grouped job's other home, its group,
    is known from its hash's gid: read when the job's key is given)
KEYS repeated jobs
  job  {P}<id>, one per id in ARGV's order, to also return each job's fields; none for states only
ARGV repeated jobs
  id  string  a job id
REPLY states  without job keys
  states  string...  per job: completed, failed, delayed, prioritized, active, waiting,
    waiting-children or unknown (also a grouped job ready in its group: ask with its key)
REPLY withFields  with job keys: each state with its job's fields, read together so they agree
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
  elseif redis.call("ZSCORE", KEYS[KEY.groupDelayed], id) then state = "delayed"
  elseif KEY_GROUP_COUNT > 0 and redis.call("HEXISTS", groupKey(i, KEY_GROUP.job), "gid") == 1 then
    -- In no structure but its group's (scripts move jobs atomically): ready in its group.
    state = "waiting"
  end
  if KEY_GROUP_COUNT > 0 then
    states[#states + 1] = state
    states[#states + 1] = redis.call("HGETALL", groupKey(i, KEY_GROUP.job))
  else
    states[i] = state
  end
end
return states
