--[[
addIterations: Makes job scheduler iterations in one call: the next iteration of each scheduler whose
current iteration a worker just took (BullMQ's updateJobScheduler), or again the current one of a
scheduler whose iteration went missing (the sweeper's repair). Only while the scheduler still exists
and its current iteration is the one named (stale producers are ignored), and never over an existing
job: duplicated or late calls make nothing twice. `every` schedules are timed here.

KEYS
  schedulers  {P}repeat
  idCounter  {P}id
  wait  {P}wait
  prioritized  {P}prioritized
  priorityCounter  {P}pc
  delayed  {P}delayed
  marker  {P}marker
  events  {P}events
  attention  <prefix>:nq:due, the sweeper's attention index: the queue is noted for its next pass
ARGV
  prefix  string  the queue key prefix {P}
  now  int  the caller's clock (ms)
  maxLenEvents  int  the events stream's approximate cap (MAXLEN ~)
ARGV repeated iterations
  schedulerId  string  the scheduler id
  idJson  string  the scheduler id escaped for a JSON string
  current  string  the id of the scheduler's current iteration, repeat:<id>:<millis>
  nextMillis  int?  a cron schedule's next run (ms); "" for an `every` schedule; ignored when again
  again  flag  "1" to make the current iteration again (it is missing), "" for the next one
  optsHead  string  the iteration's opts JSON without jobId, delay and its closing brace
  priority  int  the iteration's priority, 0 for none
  lifo  flag  "1" when the iteration is lifo
  group  string  the iteration's group id (template opts.group.id), "" for none
REPLY
  ids  string...  per item: the id of the iteration made, or 0 when nothing was made (scheduler gone,
    stale or ended, or the job exists)
EVENTS
  added, then waiting or delayed, per iteration made; duplicated when the next iteration exists.
GLOBAL LOCK
  Each iteration's job id is made inside from the scheduler's hash (BullMQ's repeat:<id>:<millis>),
  and the job's keys with it.
]]
-- @include noteAttention
-- @include everyNextMillis
-- @include loadQueueMeta
-- @include storeIteration
-- @include flushQueue
-- @include checkIntegerArgs
-- @include isNumberText
-- Iterations are stored one by one and their ids pushed by one flush at the end: a failure between
-- would leave stored iterations in no structure, so every number is checked first.
checkIntegerArgs("addIterations", { "now", "maxLenEvents" })
for i = 1, ARG_GROUP_COUNT do
  if not isNumberText(groupArg(i, ARG_GROUP.priority)) then error("addIterations: item " .. i .. " has a bad priority") end
end
local prefix, now = ARGV[ARG.prefix], tonumber(ARGV[ARG.now])
local q = { prefix = prefix, wait = KEYS[KEY.wait], prioritized = KEYS[KEY.prioritized],
  priorityCounter = KEYS[KEY.priorityCounter], delayed = KEYS[KEY.delayed], marker = KEYS[KEY.marker],
  events = KEYS[KEY.events] }
loadQueueMeta(q, ARGV[ARG.maxLenEvents])
local out = {}
for i = 1, ARG_GROUP_COUNT do
  local id = groupArg(i, ARG_GROUP.schedulerId)
  local again = groupArg(i, ARG_GROUP.again) == "1"
  local current = redis.call("ZSCORE", KEYS[KEY.schedulers], id)
  local made = 0
  if current and groupArg(i, ARG_GROUP.current) == "repeat:" .. id .. ":" .. current then
    local schedulerKey = KEYS[KEY.schedulers] .. ":" .. id
    local scheduler = redis.call("HMGET", schedulerKey, "name", "data", "every", "startDate", "offset")
    local next = tonumber(groupArg(i, ARG_GROUP.nextMillis))
    if again then
      next = current -- the id keeps the score exactly as Redis spells it
    elseif not next and tonumber(scheduler[3]) then
      next = everyNextMillis(tonumber(current), tonumber(scheduler[3]), now, scheduler[5], scheduler[4])
    end
    local jobId = next and "repeat:" .. id .. ":" .. next
    if not (next and scheduler[1]) then
      made = 0 -- ended, or not a scheduler this script can time (no `every`, or no hash)
    elseif redis.call("EXISTS", prefix .. jobId) == 1 then
      if not again then
        redis.call("XADD", q.events, "MAXLEN", "~", q.maxLen, "*", "event", "duplicated", "jobId", jobId)
      end
    else
      if not again then
        redis.call("ZADD", KEYS[KEY.schedulers], next, id)
        redis.call("HINCRBY", schedulerKey, "ic", 1)
      end
      redis.call("INCR", KEYS[KEY.idCounter])
      storeIteration(q, id, groupArg(i, ARG_GROUP.idJson), next, now, groupArg(i, ARG_GROUP.optsHead),
        scheduler[1], scheduler[2] or "{}", groupArg(i, ARG_GROUP.priority), groupArg(i, ARG_GROUP.lifo),
        groupArg(i, ARG_GROUP.group))
      made = jobId
    end
  end
  out[i] = made
end
flushQueue(q)
noteAttention(KEYS[KEY.attention], prefix, 0)
return out
