--[[
ackJobs: Finishes a batch of leased jobs in one call: completed, failed for good, retried (to delayed
or wait) or handed back. A job is only touched while this batch's token still owns its lock; the
others are reported back. A replayed call returns the first call's answer and writes nothing.

KEYS
  wait  {P}wait
  active  {P}active
  prioritized  {P}prioritized
  priorityCounter  {P}pc
  delayed  {P}delayed
  completed  {P}completed
  failed  {P}failed
  stalled  {P}stalled
  marker  {P}marker
  events  {P}events
  replayGuard  nimbusq's replay guard for this call
ARGV
  prefix  the queue key prefix {P}
  now  the caller's clock (ms), becomes finishedOn
  guardTtl  how long the replay guard lives (ms)
  maxLenEvents  the events stream's approximate cap (MAXLEN ~)
ARGV repeated jobs
  id  job id
  token  the lock token the job was leased with
  outcome  completed | failed | delayed | waiting | returned
  value  returnvalue JSON (completed) or failedReason text ("" for none)
  stacktrace  the stacktrace JSON array to store with a failure
  attemptsMade  the new atm value, "" to leave it
  due  when a delayed job is due (ms)
  priority  the job's priority
  lifo  "1" for a lifo job
  keepCount  -1 keep all, 0 remove at once, N keep the newest N
  keepAge  remove kept jobs older than this many seconds, 0 for no age limit
  keepLimit  most jobs removed by age in one call, 0 for 1000
  attempts  opts.attempts, for retries-exhausted
  parentKey  full key of the parent, or ""
  parentPrefix  the parent queue's key prefix, or ""
  parentPolicy  fpof | cpof | idof | rdof | ""
  dedupId  the job's deduplication id, or ""
  deferred  "1" when the job carried `defa`
  deadLetter  a final failure's dead-letter queue key prefix, or "" for no dead letter
  deadLetterId  the dead letter's job id
  deadLetterName  its name
  deadLetterData  its data JSON
  deadLetterOpts  its opts JSON
RETURNS
  {readyLeft, nextDue, code…}: readyLeft 1 when wait or prioritized still hold jobs; nextDue the
  earliest delayed job's due time (ms) when none are ready, else 0; one code per job: 1 done, -2 its
  lock is gone, -6 another token owns it, -3 not active, -4 (completing) children still pending, -9
  (completing) a child failed; the job is left untouched on any code but 1. A replayed call:
  {"replayed", <text>} where text lists the non-1 codes as "index:code;".
EVENTS
  completed, failed, retries-exhausted, delayed, waiting prev active, drained; waiting prev
  waiting-children on a released parent's queue; added and waiting (or duplicated) on a dead-letter queue.
]]
-- @include finishJob
-- @include requeueJob
-- @include pruneFinished
-- @include refusedCompletions
local prefix, now = ARGV[ARG.prefix], tonumber(ARGV[ARG.now])
local previous = redis.call("SET", KEYS[KEY.replayGuard], "", "NX", "GET", "PX", ARGV[ARG.guardTtl])
if previous then return { "replayed", previous } end
-- Like adds, acks read nothing from meta: the events cap is the caller's (every event here is
-- written with MAXLEN ~, which bounds the stream as BullMQ's XTRIM before finishing does), and the
-- "ready" marker for requeued jobs is written even while paused (a spurious wake-up for BullMQ).
local q = { prefix = prefix, events = KEYS[KEY.events], delayed = KEYS[KEY.delayed], wait = KEYS[KEY.wait],
  prioritized = KEYS[KEY.prioritized], priorityCounter = KEYS[KEY.priorityCounter], maxLen = ARGV[ARG.maxLenEvents],
  finished = { completed = {}, failed = {} }, prunes = {}, dueScores = {}, delayedAdds = {} }
local jobs, lockKeys = {}, {}
for i = 1, ARG_GROUP_COUNT do
  local job = {}
  for field, offset in pairs(ARG_GROUP) do
    if field ~= "first" and field ~= "size" then job[field] = groupArg(i, offset) end
  end
  jobs[i] = job
  lockKeys[i] = prefix .. job.id .. ":lock"
end
local locks = redis.call("MGET", unpack(lockKeys))
local refused = refusedCompletions(prefix, jobs, locks)
local codes, owned, deviations = {}, {}, {}
for i, job in ipairs(jobs) do
  local code = 1
  if not locks[i] then code = -2 elseif locks[i] ~= job.token then code = -6 end
  if code == 1 and refused[i] then code = refused[i] end
  if code == 1 and redis.call("LREM", KEYS[KEY.active], -1, job.id) == 0 then code = -3 end
  codes[i] = code
  if code == 1 then owned[#owned + 1] = job else deviations[#deviations + 1] = i .. ":" .. code .. ";" end
end
if #owned > 0 then
  local ownedLocks, ownedIds = {}, {}
  for i, job in ipairs(owned) do
    ownedLocks[i] = prefix .. job.id .. ":lock"
    ownedIds[i] = job.id
  end
  redis.call("DEL", unpack(ownedLocks))
  redis.call("SREM", KEYS[KEY.stalled], unpack(ownedIds))
end
for _, job in ipairs(owned) do
  if job.outcome == "completed" or job.outcome == "failed" then finishJob(q, job, now) else requeueJob(q, job, now) end
end
for from = 1, #q.delayedAdds, 4000 do
  redis.call("ZADD", KEYS[KEY.delayed], unpack(q.delayedAdds, from, math.min(from + 3999, #q.delayedAdds)))
end
for target, members in pairs(q.finished) do
  if #members > 0 then redis.call("ZADD", KEYS[KEY[target]], unpack(members)) end
end
for _, prune in pairs(q.prunes) do pruneFinished(prefix, KEYS[KEY[prune[1]]], prune[2], prune[3], prune[4], now) end
if q.ready then redis.call("ZADD", KEYS[KEY.marker], 0, "0") end
if q.earliestDue then redis.call("ZADD", KEYS[KEY.marker], "LT", q.earliestDue, "1") end
local readyLeft = redis.call("LLEN", KEYS[KEY.wait]) > 0 or redis.call("ZCARD", KEYS[KEY.prioritized]) > 0
local nextDue = 0
if not readyLeft then
  -- BullMQ's finish fetches the next job first: a delayed job pending answers that fetch, and only
  -- when nothing is delayed either (and nothing active) does the queue report `drained`.
  local first = redis.call("ZRANGE", KEYS[KEY.delayed], 0, 0, "WITHSCORES")
  if first[2] then
    nextDue = math.floor(tonumber(first[2]) / 4096)
  elseif redis.call("LLEN", KEYS[KEY.active]) == 0 then
    redis.call("XADD", KEYS[KEY.events], "*", "event", "drained")
  end
end
if #deviations > 0 then redis.call("SET", KEYS[KEY.replayGuard], table.concat(deviations), "XX", "KEEPTTL") end
local out = { readyLeft and 1 or 0, nextDue }
for i, code in ipairs(codes) do out[i + 2] = code end
return out
