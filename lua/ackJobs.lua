--[[
ackJobs: Finishes a batch of leased jobs in one call: completed, failed for good, retried (to delayed
or wait) or handed back. A job is only touched while this batch's token still owns its lock; the
others are reported back. A replayed call returns the first call's answer and writes nothing.

KEYS
  meta  {P}meta
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
RETURNS
  One code per job: 1 done, -2 its lock is gone, -6 another token owns it, -3 not active. A replayed
  call: {"replayed", <text>} where text lists the non-1 codes as "index:code;".
EVENTS
  completed, failed, retries-exhausted, delayed, waiting prev active, drained; waiting prev
  waiting-children on a released parent's queue.
]]
-- @include finishJob
-- @include requeueJob
-- @include pruneFinished
local prefix, now = ARGV[ARG.prefix], tonumber(ARGV[ARG.now])
local previous = redis.call("SET", KEYS[KEY.replayGuard], "", "NX", "GET", "PX", ARGV[ARG.guardTtl])
if previous then return { "replayed", previous } end
local meta = redis.call("HMGET", KEYS[KEY.meta], "paused", "concurrency", "opts.maxLenEvents")
local q = { prefix = prefix, events = KEYS[KEY.events], delayed = KEYS[KEY.delayed], wait = KEYS[KEY.wait],
  prioritized = KEYS[KEY.prioritized], priorityCounter = KEYS[KEY.priorityCounter], maxLen = meta[3] or "10000",
  finished = { completed = {}, failed = {} }, prunes = {} }
redis.call("XTRIM", q.events, "MAXLEN", "~", q.maxLen)
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
local codes, owned, deviations = {}, {}, {}
for i, job in ipairs(jobs) do
  local code = 1
  if not locks[i] then code = -2 elseif locks[i] ~= job.token then code = -6 end
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
for target, members in pairs(q.finished) do
  if #members > 0 then redis.call("ZADD", KEYS[KEY[target]], unpack(members)) end
end
for _, prune in pairs(q.prunes) do pruneFinished(prefix, KEYS[KEY[prune[1]]], prune[2], prune[3], prune[4], now) end
if q.ready and not meta[1] then
  if not meta[2] or redis.call("LLEN", KEYS[KEY.active]) < tonumber(meta[2]) then
    redis.call("ZADD", KEYS[KEY.marker], 0, "0")
  end
end
if q.earliestDue then redis.call("ZADD", KEYS[KEY.marker], "LT", q.earliestDue, "1") end
if redis.call("LLEN", KEYS[KEY.wait]) == 0 and redis.call("ZCARD", KEYS[KEY.prioritized]) == 0
    and redis.call("LLEN", KEYS[KEY.active]) == 0 then
  redis.call("XADD", KEYS[KEY.events], "*", "event", "drained")
end
if #deviations > 0 then redis.call("SET", KEYS[KEY.replayGuard], table.concat(deviations), "XX", "KEEPTTL") end
return codes
