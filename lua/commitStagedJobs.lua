--[[
commitStagedJobs: Makes a staged add visible in one call: persists the staged hashes, moves every staged
id into its queue's structures, merges staged dependencies into each parent's, decides the jobs with
deduplication (they enter last), links existing children and deletes the staging. Before it no reader
sees a job of the add; after it, all. Safe to replay.

KEYS
  replayGuard  the add's replay guard, <prefix>:nq-req:<queue>:<token>
  stage  the add's staging record (see stageJobs)
  stagedKeys  <stage>:keys
  stagedCustomKeys  <stage>:custom-keys
  parents  <stage>:parents
  attention  <prefix>:nq:due, the sweeper's attention index: each queue added to is noted for now
KEYS repeated queues
  wait  {P}wait
  prioritized  {P}prioritized
  delayed  {P}delayed
  marker  {P}marker
  waitingChildren  {P}waiting-children
  priorityCounter  {P}pc
  events  {P}events
  stagedWait  <stage>:<n>:wait
  stagedLifo  <stage>:<n>:lifo
  stagedPrioritized  <stage>:<n>:prioritized
  stagedDelayed  <stage>:<n>:delayed
  stagedWaitingChildren  <stage>:<n>:waiting-children
ARGV
  guardTtl  int  how long the replay guard lives (ms)
  now  int  the caller's clock (epoch ms)
  maxLenEvents  int  the events stream's approximate cap (MAXLEN ~)
  events  int  which events to write: 2 all (BullMQ's), 1 final only or 0 none
  chunks  int  how many stageJobs calls the add made
  persistFrom  int  index into stagedKeys (0-based) from which this call persists; sealStagedJobs did the rest
  persistCustomFrom  int  the same for stagedCustomKeys
ARGV repeated deferred
  kind  "dedup"|"attach"  a staged job with deduplication, or an existing job re-added under a parent
  queue  int  1-based index of the job's queue in KEYS
  id  string  the job's id
  parentKey  string  full key of the parent job, or ""
  parentField  string  the `parent` hash field (JSON), or ""
  parentPrefix  string  the parent queue's key prefix, or ""
  inBatch  flag  "1" when the existing job is an earlier job of this same add
  dedupId  string  deduplication id, or ""
  dedupTtl  int  deduplication window (ms), 0 for none
  dedupExtend  flag  "1" to reset the window on a duplicate
  dedupReplace  flag  "1" to replace an owner that is still delayed
  placement  "wait"|"lifo"|"prioritized"|"delayed"|"waiting-children"  where the job goes
  timestamp  int  creation time (ms)
  delay  int  delay (ms)
  priority  int  priority
REPLY committed  again on a replay
  jobs  (outcome int, jobId string)...  per deferred job: 1 created, 2 duplicated, 3 deduplicated
REPLY gone  nothing is written then
  code  {code}  stagingGone
REPLY refused  nothing is written then
  code  code  parentNotFound or parentConflict
  detail  string  the parent's key (parentNotFound) or the deferred job's index, 1-based (parentConflict)
CODES
  parentNotFound  -5  a parent is gone
  parentConflict  -7  a deferred job now has another parent
  stagingGone  -30  the staging is gone or partial (expired, aborted)
EVENTS
  with events 2: deduplicated and removed (deduplication) for deferred jobs; waiting prev
  waiting-children for a parent left with nothing pending. The jobs' added, waiting, delayed,
  waiting-children and duplicated events follow in publishAddEvents calls.
GLOBAL LOCK  It places the staged jobs it reads from `stage`'s lists, their parents and groups.
]]
-- @include noteAttention
-- @include checkIntegerArgs
-- @include replayedResult
-- @include saveResult
-- @include checkStagedAdd
-- @include pushStagedQueue
-- @include placeDeferredJob
-- @include flushDeferredJobs
-- @include releaseParent
-- @include copyGroupFields

checkIntegerArgs("commitStagedJobs", { "guardTtl", "now", "maxLenEvents", "events", "chunks", "persistFrom", "persistCustomFrom" })
local replayed = replayedResult(KEYS[KEY.replayGuard])
if replayed then return replayed end
local k = { stage = KEYS[KEY.stage], stagedKeys = KEYS[KEY.stagedKeys],
  stagedCustomKeys = KEYS[KEY.stagedCustomKeys], parents = KEYS[KEY.parents] }
local queues = {}
for g = 1, KEY_GROUP_COUNT do
  local q = copyGroupFields({ maxLen = ARGV[ARG.maxLenEvents], dueScores = {},
    deferred = { wait = {}, lifo = {}, prioritized = {}, delayed = {}, waitingChildren = {} } }, KEY_GROUP, groupKey, g)
  q.prefix = string.sub(q.wait, 1, -5)
  queues[g] = q
end
local deferred = {}
for i = 1, ARG_GROUP_COUNT do
  local job = copyGroupFields({}, ARG_GROUP, groupArg, i)
  job.queue = tonumber(job.queue)
  deferred[i] = job
end

local tail = redis.call("LRANGE", k.stagedKeys, tonumber(ARGV[ARG.persistFrom]), -1)
local customTail = redis.call("LRANGE", k.stagedCustomKeys, tonumber(ARGV[ARG.persistCustomFrom]), -1)
for _, key in ipairs(customTail) do table.insert(tail, key) end
local failure, counts, parents = checkStagedAdd(k, queues, tonumber(ARGV[ARG.chunks]), tail, deferred)
if failure then return failure end
for _, key in ipairs(tail) do redis.call("PERSIST", key) end
for g, q in ipairs(queues) do pushStagedQueue(q, g, counts) end
local dropped = { k.stage, k.stagedKeys, k.stagedCustomKeys, k.parents }
for i = 1, #parents, 2 do
  local staged = k.stage .. ":deps:" .. parents[i]
  redis.call("SUNIONSTORE", parents[i] .. ":dependencies", parents[i] .. ":dependencies", staged)
  table.insert(dropped, staged)
end
local level, now = tonumber(ARGV[ARG.events]), tonumber(ARGV[ARG.now])
local result, release = {}, {}
for i, job in ipairs(deferred) do
  local completed
  result[2 * i - 1], result[2 * i], completed = placeDeferredJob(queues[job.queue], job, level)
  if completed then release[job.parentKey] = job.parentPrefix end
end
for _, q in ipairs(queues) do flushDeferredJobs(q) end
for parentKey, parentPrefix in pairs(release) do
  if redis.call("SCARD", parentKey .. ":dependencies") == 0 then
    releaseParent(parentPrefix, string.sub(parentKey, #parentPrefix + 1), parentKey, now)
  end
end
for _, q in ipairs(queues) do
  for _, name in ipairs({ "Wait", "Lifo", "Prioritized", "Delayed", "WaitingChildren" }) do table.insert(dropped, q["staged" .. name]) end
  noteAttention(KEYS[KEY.attention], q.prefix, now)
end
for from = 1, #dropped, 4000 do redis.call("DEL", unpack(dropped, from, math.min(from + 3999, #dropped))) end
return saveResult(KEYS[KEY.replayGuard], result, ARGV[ARG.guardTtl])
