--[[
sweepQueues: One sweeper pass over several queues, under the sweeper lock: promotes due delayed jobs,
runs BullMQ's stalled check, reads the backlog and new events to forward, finds schedulers whose due
iteration is missing, and writes when each queue next needs a look to the attention index (its next
delayed job, stalled check, scheduler run, a recheck of waiting jobs, now for events left) or takes it
out. Reads little when a queue is idle.

KEYS
  lock  the sweeper lock (SET NX PX; this call's token renews it)
  cursors  hash: queue events key -> id of the last event forwarded
  attention  <prefix>:nq:due, the attention index (member: queue name, score: when it needs a look)
KEYS repeated queues
  meta  {P}meta (also the settings workers register: trackWorker)
  wait  {P}wait
  active  {P}active
  prioritized  {P}prioritized
  priorityCounter  {P}pc
  delayed  {P}delayed
  marker  {P}marker
  events  {P}events
  stalled  {P}stalled
  stalledCheck  {P}stalled-check
  schedulers  {P}repeat
  workers  {P}nq:workers: running worker invocations, score = when each expires (ms)
ARGV
  token  string  the sweeper invocation's lock token
  lockTtl  int  how long the lock lives without renewal (ms)
  now  int  the caller's clock (ms)
  stalledInterval  int  BullMQ's stalled-check interval (ms)
  maxStalledCount  int  stalls allowed before a job is failed
  promoteLimit  int  most delayed jobs promoted per queue and pass
  eventBatch  int  most events read per queue to forward, 0 to forward none
  schedulerLookback  int  how far back (ms) schedulers due are checked for a missing iteration
  recheck  int  how soon (ms) a queue with jobs waiting is looked at again (its workers may have been lost)
ARGV repeated names
  name  string  the queue's name, in the order of the queues' KEYS (its member in the attention index)
REPLY locked  another sweeper holds the lock
  marker  {"locked"}
REPLY swept  one entry per queue; times in ms, 0 for none
  queues  {(counts {(waiting int, prioritized int, active int, paused int, workers int, nextDelayedAt int,
    nextStalledCheckAt int, nextSchedulerAt int, promoted int, batchSize int, concurrency int)}, stalled
    {string...}, events {(eventId string, fields hash, jobName string?)...}, missing {(schedulerId string,
    millis string, fields hash)...})}...  nextSchedulerAt: the first run to come; batchSize, concurrency:
    the workers' last registration (0 if none or unread); jobName: the event's job's, for forwarding;
    missing: schedulers due in the lookback without their iteration repeat:<id>:<millis>, with their hash
EVENTS
  waiting prev delayed (promotion); waiting prev active and stalled (stalled jobs).
GLOBAL LOCK
  A pass promotes due delayed jobs, recovers stalled ones and makes scheduler iterations it finds
  inside, each with its hash; it runs once a tick per prefix, not per job.
]]
-- @include checkIntegerArgs
-- @include sweepDelayed
-- @include checkStalledJobs
-- @include settleAttention
-- @include missingIterations
checkIntegerArgs("sweepQueues", { "lockTtl", "now", "stalledInterval", "maxStalledCount", "promoteLimit",
  "eventBatch", "schedulerLookback", "recheck" })
if ARG_GROUP_COUNT ~= KEY_GROUP_COUNT then error("sweepQueues: one name per queue") end
local now = tonumber(ARGV[ARG.now])
-- Redis 6.2 form (no NX with GET): the holder is read only when the lock was already taken.
if not redis.call("SET", KEYS[KEY.lock], ARGV[ARG.token], "NX", "PX", ARGV[ARG.lockTtl]) then
  if redis.call("GET", KEYS[KEY.lock]) ~= ARGV[ARG.token] then return { "locked" } end
  redis.call("PEXPIRE", KEYS[KEY.lock], ARGV[ARG.lockTtl])
end
local eventBatch = tonumber(ARGV[ARG.eventBatch])
local eventsKeys = {}
for g = 1, KEY_GROUP_COUNT do eventsKeys[g] = groupKey(g, KEY_GROUP.events) end
local cursors, out = eventBatch > 0 and redis.call("HMGET", KEYS[KEY.cursors], unpack(eventsKeys)) or {}, {}
for g = 1, KEY_GROUP_COUNT do
  local q = {}
  for field, offset in pairs(KEY_GROUP) do
    if field ~= "first" and field ~= "size" then q[field] = groupKey(g, offset) end
  end
  q.prefix = string.sub(q.wait, 1, -5)
  -- A queue's first cursor is the stream's end before this pass writes: its own events are forwarded.
  local cursor = cursors[g]
  if eventBatch > 0 and not cursor then
    local last = redis.call("XREVRANGE", q.events, "+", "-", "COUNT", 1)
    cursor = last[1] and last[1][1] or "0-0"
    redis.call("HSET", KEYS[KEY.cursors], q.events, cursor)
  end
  local promoted, nextDelayedAt, readyGroups = sweepDelayed(q, now, tonumber(ARGV[ARG.promoteLimit]))
  local active, stalled, nextStalledCheckAt = redis.call("LLEN", q.active), {}, 0
  if active > 0 then
    stalled = checkStalledJobs(q, now, ARGV[ARG.stalledInterval], tonumber(ARGV[ARG.maxStalledCount])) or {}
    nextStalledCheckAt = now + math.max(redis.call("PTTL", q.stalledCheck), 0)
    active = redis.call("LLEN", q.active)
  end
  -- Groups with ready jobs count as waiting jobs: a lost kick leaves them too.
  local waiting, prioritized = redis.call("LLEN", q.wait) + readyGroups, redis.call("ZCARD", q.prioritized)
  local paused, workers, batchSize, concurrency = 0, 0, 0, 0
  if waiting + prioritized + active > 0 then
    local meta = redis.call("HMGET", q.meta, "paused", "nq:batchSize", "nq:concurrency")
    paused, batchSize, concurrency = meta[1] and 1 or 0, tonumber(meta[2]) or 0, tonumber(meta[3]) or 0
    redis.call("ZREMRANGEBYSCORE", q.workers, 0, now)
    workers = redis.call("ZCARD", q.workers)
  end
  local nextSchedulerAt, missing = missingIterations(q, now, tonumber(ARGV[ARG.schedulerLookback]))
  local events = {}
  if eventBatch > 0 then
    local names = {}
    for _, entry in ipairs(redis.call("XRANGE", q.events, "(" .. cursor, "+", "COUNT", eventBatch)) do
      local fields, jobId = entry[2], nil
      for i = 1, #fields, 2 do
        if fields[i] == "jobId" then jobId = fields[i + 1] end
      end
      if jobId and names[jobId] == nil then names[jobId] = redis.call("HGET", q.prefix .. jobId, "name") end
      events[#events + 1] = entry[1]
      events[#events + 1] = fields
      events[#events + 1] = jobId and names[jobId] or false
    end
  end
  out[g] = { { waiting, prioritized, active, paused, workers, nextDelayedAt, nextStalledCheckAt,
    nextSchedulerAt, promoted, batchSize, concurrency }, stalled, events, missing }
  settleAttention(KEYS[KEY.attention], groupArg(g, ARG_GROUP.name), { nextDelayedAt, active > 0 and
    math.max(nextStalledCheckAt, now + 1) or 0, nextSchedulerAt, waiting + prioritized > 0 and paused == 0 and
    now + tonumber(ARGV[ARG.recheck]) or 0, (#missing > 0 or (eventBatch > 0 and #events >= 3 * eventBatch)) and now or 0 })
end
return out
