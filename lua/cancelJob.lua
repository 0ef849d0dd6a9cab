--[[
cancelJob: Cancels a job from anywhere (queue.cancelJob). A job that waits (wait, paused, prioritized,
delayed, waiting-children) or whose lease lapsed ends failed at once with the reason: a final failure
(no retry, no retries-exhausted event, no dead letter) with its removeOnFail, parent and deduplication
handled as a worker's final failure. A running job whose lock a nimbusq worker holds (its token starts
with "nq-") gets the lock marked `<token>|cancel|<reason>`, TTL kept: the holder's next lease
extension reads the mark, aborts the job's signal and fails the job with the reason. A lock another
kind of worker holds (BullMQ's) is left alone. Either way the job's `nq:cancel` field records the
reason, so a nimbusq worker that leases the job later (after a crash, a retry or a stall) fails it at
once without running it; retries clear the field.

KEYS
  job  the job's hash, {P}<id>
  lock  its lock, {P}<id>:lock
  failed  {P}failed
  completed  {P}completed
  events  {P}events
  replayGuard  nimbusq's replay guard for this call
  attention  <prefix>:nq:due, the sweeper's attention index
ARGV
  prefix  string  the queue key prefix {P}
  jobId  string  the job id
  reason  string  the cancel's reason: the failedReason, or the lock's mark
  now  int  the caller's clock (ms): finishedOn
  guardTtl  int  how long the replay guard lives (ms)
  maxLenEvents  int  the events stream's approximate cap (MAXLEN ~)
  events  int  which events to write: 2 all, 1 final only, 0 none (failed is a final event)
  keepCount  int  removeOnFail's count: -1 keep every failed job, 0 remove this one at once
  keepAge  int  removeOnFail's age (s), 0 for none
  keepLimit  int  removeOnFail's limit per call, 0 for the default
  parentPolicy  string  what the parent does when this job fails (AckEntry.parentPolicy)
REPLY done
  outcome  int  what the cancel did (OUTCOMES)
  state  string  the job's state before it: wait, paused, prioritized, delayed, waiting-children,
    active, completed or failed
REPLY refused
  code  code
CODES
  jobNotFound  -1  no such job
OUTCOMES
  cancelled  1  the job ended failed with the reason now
  signalled  2  a nimbusq worker runs it: its next lease extension aborts it
  recorded  3  a worker nimbusq cannot reach runs it: recorded for a later nimbusq lease
  finished  4  the job had finished already (state: completed or failed); nothing changed
EVENTS
  a job failed now: failed {jobId, failedReason, prev: its state}
GLOBAL LOCK
  It finds the job in whichever state holds it (each state's key built from the queue prefix); its
  parent's, deduplication and group keys are named by fields of its hash, and removeOnFail prunes
  the failed jobs it finds.
]]
-- @include checkIntegerArgs
-- @include removeFromAnyState
-- @include finishJob
-- @include pruneFinished
-- @include parentPrefixOf
-- @include noteAttention
checkIntegerArgs("cancelJob", { "now", "guardTtl", "maxLenEvents", "events", "keepCount", "keepAge", "keepLimit" })
local id, prefix, reason, now = ARGV[ARG.jobId], ARGV[ARG.prefix], ARGV[ARG.reason], tonumber(ARGV[ARG.now])
if redis.call("SET", KEYS[KEY.replayGuard], "", "NX", "PX", ARGV[ARG.guardTtl]) == false then
  local saved = redis.call("GET", KEYS[KEY.replayGuard]) or ""
  local outcome, state = string.match(saved, "^(%d+)|(.*)$")
  if outcome then return { tonumber(outcome), state } end
  return { -1 }
end
local function answer(outcome, state)
  redis.call("SET", KEYS[KEY.replayGuard], outcome .. "|" .. state, "XX", "KEEPTTL")
  return { outcome, state }
end
local job = redis.call("HMGET", KEYS[KEY.job], "timestamp", "finishedOn", "atm", "stacktrace", "parentKey",
  "parent", "deid", "gid")
if not job[1] then
  redis.call("SET", KEYS[KEY.replayGuard], "", "XX", "KEEPTTL")
  return { -1 }
end
if job[2] then
  return answer(4, redis.call("ZSCORE", KEYS[KEY.failed], id) and "failed" or "completed")
end
local lock = redis.call("GET", KEYS[KEY.lock])
if lock then
  redis.call("HSET", KEYS[KEY.job], "nq:cancel", reason)
  if string.sub(lock, 1, 3) ~= "nq-" then return answer(3, "active") end
  local token = string.match(lock, "^(.-)|cancel|") or lock
  redis.call("SET", KEYS[KEY.lock], token .. "|cancel|" .. reason, "KEEPTTL")
  return answer(2, "active")
end
local state = removeFromAnyState(prefix, id, job[1], job[8] or nil)
if state == "completed" or state == "failed" or state == "unknown" then
  -- A hash without finishedOn in a finished set, or in no structure: put back what was taken, change nothing.
  if state ~= "unknown" then redis.call("ZADD", KEYS[KEY[state]], now, id) end
  return answer(4, state)
end
local atm = tonumber(job[3] or "0") or 0
local q = { prefix = prefix, events = KEYS[KEY.events], maxLen = ARGV[ARG.maxLenEvents],
  level = tonumber(ARGV[ARG.events]), finished = { completed = {}, failed = {} }, prunes = {},
  attention = KEYS[KEY.attention] }
finishJob(q, { id = id, outcome = "failed", value = reason, stacktrace = job[4] or "[]", attemptsMade = atm,
  -- A cancel is not the last of its retries: no retries-exhausted event.
  attempts = atm + 1, deferred = "", dedupId = job[7] or "", parentKey = job[5] or "",
  parentPrefix = parentPrefixOf(job[6]) or "", parentPolicy = ARGV[ARG.parentPolicy], keepCount = ARGV[ARG.keepCount],
  keepAge = ARGV[ARG.keepAge], keepLimit = ARGV[ARG.keepLimit], deadLetter = "", prev = state }, now)
if #q.finished.failed > 0 then redis.call("ZADD", KEYS[KEY.failed], unpack(q.finished.failed)) end
for _, prune in pairs(q.prunes) do pruneFinished(prefix, KEYS[KEY.failed], prune[2], prune[3], prune[4], now) end
noteAttention(KEYS[KEY.attention], prefix, now)
return answer(1, state)
