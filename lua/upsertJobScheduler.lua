--[[
upsertJobScheduler: Creates or updates a job scheduler in BullMQ 6.7.0's layout: the `repeat` ZSET entry
(score: the pending iteration's millis), the `repeat:<id>` hash (rewritten, `ic` kept) and the iteration
job `repeat:<id>:<millis>`. A pending previous iteration (delayed, prioritized, waiting) is replaced; an
`every` schedule keeps its millis unless `every` changed, timed here from its previous run (cron: timed).

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
  schedulerId  string  the scheduler id
  idJson  string  the scheduler id escaped for a JSON string
  now  int  the caller's clock (ms)
  nextMillis  int?  a cron schedule's first run (ms), "" for an `every` schedule
  every  int?  the interval (ms), or ""
  offset  int?  the `every` offset given (ms), or ""
  startDate  int?  ms, or ""
  endDate  int?  ms, or ""
  tz  string  IANA time zone, or ""
  pattern  string  cron pattern, or ""
  limit  int?  most iterations, or ""
  name  string  the iterations' job name
  data  string  the template data JSON, "" when it is {}
  templateOpts  string  the template options JSON (BullMQ's short keys), "" when it is {}
  optsHead  string  the iteration's opts JSON without jobId, delay and its closing brace
  priority  int  the iterations' priority, 0 for none
  lifo  flag  "1" when the iterations are lifo
  group  string  the iterations' group id (template opts.group.id), "" for none
  maxLenEvents  int  the events stream's approximate cap (MAXLEN ~)
REPLY added
  jobId  string  the new iteration's id
  delay  int  its delay (ms)
REPLY refused  nothing is written then
  code  code
CODES
  schedulerIdTaken  -10  a cron schedule's iteration id is taken by a job that is not pending
  schedulerSlotsBusy  -11  32 `every` slots in a row are taken
EVENTS
  added, then waiting or delayed, for the new iteration.
GLOBAL LOCK  Its pending iteration's id (repeat:<id>:<millis>) and keys are made inside.
]]
-- @include noteAttention
-- @include everyNextMillis
-- @include loadQueueMeta
-- @include storeIteration
-- @include flushQueue
-- @include removeJobKeys
-- @include removeFromList
-- @include checkIntegerArgs
-- Placing the new iteration (after the old one is gone) reads these as numbers.
checkIntegerArgs("upsertJobScheduler", { "now", "priority", "maxLenEvents" })
local prefix, id, now = ARGV[ARG.prefix], ARGV[ARG.schedulerId], tonumber(ARGV[ARG.now])
local schedulerKey = KEYS[KEY.schedulers] .. ":" .. id
local every, offset = tonumber(ARGV[ARG.every]), tonumber(ARGV[ARG.offset])
local prev = redis.call("ZSCORE", KEYS[KEY.schedulers], id)
local prevId = prev and "repeat:" .. id .. ":" .. prev
local pendingIn, waitEnd
if prev then
  if redis.call("ZSCORE", KEYS[KEY.delayed], prevId) then
    pendingIn = KEY.delayed
  elseif redis.call("ZSCORE", KEYS[KEY.prioritized], prevId) then
    pendingIn = KEY.prioritized
  else
    waitEnd = findInList(KEYS[KEY.wait], prefix, prevId)
    pendingIn = waitEnd and KEY.wait
  end
end
-- BullMQ stores the offset it timed an `every` schedule with (0 for cron) unless an iteration is
-- replaced: then the one given, else the stored one.
local next, storedOffset = tonumber(ARGV[ARG.nextMillis]), 0
if every then
  local from = prev and tonumber(prev)
  local everyChanged = from and tonumber(redis.call("HGET", schedulerKey, "every")) ~= every
  if everyChanged then from = nil end
  next, storedOffset = everyNextMillis(from, every, now, offset, tonumber(ARGV[ARG.startDate]))
  if pendingIn and not everyChanged then next = tonumber(prev) end
end
if pendingIn then storedOffset = offset or redis.call("HGET", schedulerKey, "offset") end
-- A job under the new id that is not the iteration being replaced is never overwritten.
local jobId = "repeat:" .. id .. ":" .. next
local function taken(candidate)
  return not (pendingIn and candidate == prevId) and redis.call("EXISTS", prefix .. candidate) == 1
end
local slots = 0
while taken(jobId) do
  if not every then return -10 end
  slots = slots + 1
  if slots > 32 then return -11 end
  next = next + every
  jobId = "repeat:" .. id .. ":" .. next
end
-- Found in wait above: one walk from the same end takes it out.
if waitEnd then redis.call("LREM", KEYS[KEY.wait], waitEnd, prevId) end
if pendingIn then
  if not waitEnd then redis.call("ZREM", KEYS[pendingIn], prevId) end
  removeJobKeys(prefix .. prevId)
end
-- The hash is rewritten as BullMQ does: fields absent from this schedule must not linger.
local fields = { "name", ARGV[ARG.name] }
local function add(field, value)
  if value and value ~= "" then fields[#fields + 1] = field; fields[#fields + 1] = value end
end
for _, field in ipairs({ "tz", "limit", "pattern", "startDate", "endDate", "every" }) do add(field, ARGV[ARG[field]]) end
add("offset", storedOffset)
add("opts", ARGV[ARG.templateOpts])
add("data", ARGV[ARG.data])
add("ic", redis.call("HGET", schedulerKey, "ic") or 1)
redis.call("DEL", schedulerKey)
redis.call("HSET", schedulerKey, unpack(fields))
redis.call("ZADD", KEYS[KEY.schedulers], next, id)
redis.call("INCR", KEYS[KEY.idCounter])
local q = { prefix = prefix, wait = KEYS[KEY.wait], prioritized = KEYS[KEY.prioritized],
  priorityCounter = KEYS[KEY.priorityCounter], delayed = KEYS[KEY.delayed], marker = KEYS[KEY.marker],
  events = KEYS[KEY.events] }
loadQueueMeta(q, ARGV[ARG.maxLenEvents])
local data = ARGV[ARG.data] ~= "" and ARGV[ARG.data] or "{}"
local delay = storeIteration(q, id, ARGV[ARG.idJson], next, now, ARGV[ARG.optsHead], ARGV[ARG.name], data,
  ARGV[ARG.priority], ARGV[ARG.lifo], ARGV[ARG.group])
flushQueue(q)
noteAttention(KEYS[KEY.attention], prefix, 0)
return { jobId, delay }
