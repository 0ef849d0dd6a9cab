#!lua flags=allow-key-locking
--[[
publishAddEvents: Writes the add events of a committed staged add, in job order, a chunk per call: for a
created job `added` then `waiting`, `delayed` or `waiting-children` as addJobs writes them, for a
duplicated one `duplicated`. They follow the commit because 10,000 jobs' events do not fit in one
call's time budget. Safe to replay (a replayed call writes nothing).

KEYS
  replayGuard  this call's replay guard, <prefix>:nq-req:<queue>:<token>-e<step>
KEYS repeated queues
  events  {P}events
ARGV
  guardTtl  int  how long the replay guard lives (ms)
  maxLenEvents  int  the events stream's approximate cap (MAXLEN ~)
ARGV repeated jobs
  queue  int  1-based index of the job's queue in KEYS
  id  string  the job's id
  outcome  "created"|"duplicated"  whether the add created the job or found it
  name  string  job name
  placement  "wait"|"lifo"|"prioritized"|"delayed"|"waiting-children"  where the job goes
  due  int  when a delayed job is due (ms), else 0
REPLY
  count  int  the number of jobs whose events were written; 0 for a replay
EVENTS
  added, waiting, delayed, waiting-children, duplicated
]]
-- @include checkIntegerArgs

checkIntegerArgs("publishAddEvents", { "guardTtl", "maxLenEvents" })
for i = 1, ARG_GROUP_COUNT do
  local queue = tonumber(groupArg(i, ARG_GROUP.queue))
  if not queue or queue < 1 or queue > KEY_GROUP_COUNT or queue % 1 ~= 0 then
    error("publishAddEvents: job " .. i .. " names no queue of the call")
  end
end
if not redis.call("SET", KEYS[KEY.replayGuard], "1", "NX", "PX", ARGV[ARG.guardTtl]) then return 0 end
local maxLen = ARGV[ARG.maxLenEvents]
for i = 1, ARG_GROUP_COUNT do
  local events = groupKey(tonumber(groupArg(i, ARG_GROUP.queue)), KEY_GROUP.events)
  local id, placement = groupArg(i, ARG_GROUP.id), groupArg(i, ARG_GROUP.placement)
  if groupArg(i, ARG_GROUP.outcome) == "duplicated" then
    redis.call("XADD", events, "MAXLEN", "~", maxLen, "*", "event", "duplicated", "jobId", id)
  else
    redis.call("XADD", events, "*", "event", "added", "jobId", id, "name", groupArg(i, ARG_GROUP.name))
    if placement == "delayed" then
      redis.call("XADD", events, "MAXLEN", "~", maxLen, "*", "event", "delayed", "jobId", id,
        "delay", groupArg(i, ARG_GROUP.due))
    elseif placement == "waiting-children" then
      redis.call("XADD", events, "MAXLEN", "~", maxLen, "*", "event", "waiting-children", "jobId", id)
    else
      redis.call("XADD", events, "MAXLEN", "~", maxLen, "*", "event", "waiting", "jobId", id)
    end
  end
end
return ARG_GROUP_COUNT
