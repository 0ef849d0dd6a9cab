--[[
stageJobs: Stages one chunk of an add too large for one call (Queue.addBulk, FlowProducer trees): the
chunk's new jobs get their hashes at their final keys, with a TTL, and their ids go to the add's
staging keys beside the queue (<prefix>:nq-req:<queue>:<token>:stage…), where no reader looks. No
structure, event, parent or deduplication window changes until commitStagedJobs makes the whole add
visible in one call; an abandoned staging expires by itself. Safe to replay.

KEYS
  replayGuard  this call's replay guard, <prefix>:nq-req:<queue>:<token>-s<chunk>
  stage  the add's staging record (HASH of what was staged: chunks, keys, <queue>:<structure>, deps:<parent>)
  stagedKeys  <stage>:keys, LIST of the staged job hashes with auto or generated ids
  stagedCustomKeys  <stage>:custom-keys, LIST of the staged job hashes with custom ids
  parents  <stage>:parents, HASH parent key → that parent queue's key prefix
KEYS repeated queues
  idCounter  {P}id
  delayed  {P}delayed
  priorityCounter  {P}pc
  stagedWait  <stage>:<n>:wait, LIST of ids to LPUSH into wait, in order
  stagedLifo  <stage>:<n>:lifo, LIST of ids to RPUSH into wait
  stagedPrioritized  <stage>:<n>:prioritized, ZSET with the prioritized scores
  stagedDelayed  <stage>:<n>:delayed, ZSET with the delayed scores
  stagedWaitingChildren  <stage>:<n>:waiting-children, ZSET of parents by timestamp
ARGV
  ttl  int  how long the staged keys and this call's replay guard live (ms)
ARGV repeated jobs
  queue  int  1-based index of the job's queue in KEYS (the same list in every call of one add)
  customId  string  the custom job id, or "" for the next counter value
  generatedId  flag  "1" when customId was just generated (a flow node's UUID): no need to look it up
  name  string  job name
  data  string  job data as JSON text
  opts  string  job options as JSON text, BullMQ's short keys
  timestamp  int  creation time (ms)
  delay  int  delay (ms), 0 for none
  priority  int  priority, 0 for none
  placement  "wait"|"lifo"|"prioritized"|"delayed"|"waiting-children"  where the job goes
  parentKey  string  full key of the parent job, or ""
  parentField  string  the `parent` hash field (JSON), or ""
  parentPrefix  string  the parent queue's key prefix <prefix>:<queue>:, or ""
  dedupId  string  deduplication id, or ""
  dedupTtl  int  deduplication window (ms), 0 for none
  dedupExtend  flag  "1" to reset the window on a duplicate
  dedupReplace  flag  "1" to replace an owner that is still delayed
  repeatJobKey  string  job scheduler id (rjk), or ""
  group  string  the job's group id (gid), or "": the commit puts it in its group
REPLY staged
  jobs  (outcome int, jobId string)...  per job: 1 staged (created by the commit), 2 duplicated (the
    custom id exists), 4 staged with deduplication (the commit decides), 5 an existing job to link to
    its parent at the commit
REPLY refused  nothing is written then
  code  code
  index  int  the job refused (1-based)
CODES
  parentNotFound  -5  the parent of job `index` does not exist
  parentConflict  -7  job `index` exists with another parent
  idInFlight  -31  job `index`'s custom id is held by another add's staging
EVENTS
  none (commitStagedJobs and publishAddEvents write them)
GLOBAL LOCK
  Ids come from {P}id, INCR'd inside, so the staged hashes are named inside, and each parent's
  staged-dependencies key is built from `stage`.
]]
-- @include checkIntegerArgs
-- @include replayedResult
-- @include saveResult
-- @include checkNewJobs
-- @include stageJob
-- @include flushStagedChunk
-- @include copyGroupFields

checkIntegerArgs("stageJobs", { "ttl" })
local replayed = replayedResult(KEYS[KEY.replayGuard])
if replayed then return replayed end
local ttl = ARGV[ARG.ttl]
local jobs = {}
for i = 1, ARG_GROUP_COUNT do
  local job = copyGroupFields({}, ARG_GROUP, groupArg, i)
  job.queue = tonumber(job.queue)
  jobs[i] = job
end
local queues = {}
for g = 1, KEY_GROUP_COUNT do
  local q = copyGroupFields({ counts = 0, dueScores = {},
    staged = { wait = {}, lifo = {}, prioritized = {}, delayed = {}, waitingChildren = {} } }, KEY_GROUP, groupKey, g)
  q.prefix = string.sub(q.idCounter, 1, -3)
  queues[g] = q
end

local failure = checkNewJobs(jobs, queues)
if failure then return failure end

for _, q in ipairs(queues) do
  if q.counts > 0 then q.last = redis.call("INCRBY", q.idCounter, q.counts) end
end
local out = { keys = {}, customKeys = {}, deps = {}, parents = {} }
local result = {}
for _, job in ipairs(jobs) do
  local q = queues[job.queue]
  local id, outcome = job.customId, 1
  if id == "" then id = string.format("%d", q.last - q.counts + job.seq) end
  if job.exists then
    outcome = job.parentKey ~= "" and 5 or 2
  else
    stageJob(q, job, id, ttl, out)
    if job.dedupId ~= "" then outcome = 4 end
  end
  table.insert(result, outcome)
  table.insert(result, id)
end
flushStagedChunk({ stage = KEYS[KEY.stage], stagedKeys = KEYS[KEY.stagedKeys],
  stagedCustomKeys = KEYS[KEY.stagedCustomKeys], parents = KEYS[KEY.parents] }, queues, out, ttl)
return saveResult(KEYS[KEY.replayGuard], result, ttl)
