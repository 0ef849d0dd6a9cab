--[[
addJobs: Adds a batch of jobs (Queue.add/addBulk, FlowProducer trees) in BullMQ 6's layout, in one
atomic call that is safe to replay: a replayed call returns the first call's result and writes nothing.

KEYS
  replayGuard  nimbusq's replay guard for this call, <prefix>:nq-req:<queue>:<token> of the first queue
  attention  <prefix>:nq:due, the sweeper's attention index: each queue added to is noted for now
KEYS repeated queues
  idCounter  {P}id
  wait  {P}wait
  prioritized  {P}prioritized
  priorityCounter  {P}pc
  delayed  {P}delayed
  marker  {P}marker
  events  {P}events
  waitingChildren  {P}waiting-children
ARGV
  guardTtl  int  how long the replay guard lives (ms)
  maxLenEvents  int  the events stream's approximate cap (MAXLEN ~), BullMQ's default is 10000
  now  int  the caller's clock (epoch ms)
  events  int  which events to write: 2 all (BullMQ's), 1 final only or 0 none (both write no add events)
ARGV repeated jobs
  queue  int  1-based index of the job's queue in KEYS
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
  group  string  the job's group id (opts.group.id), or "": a grouped job goes to its group (gid
    field; nq:g:<gid>, or nq:gdelayed when delayed), never to wait, prioritized or delayed
REPLY fresh
  jobs  (outcome int, jobId string)...  per job: outcome 1 created, 2 duplicated (custom id exists),
    3 deduplicated (jobId is the owner)
REPLY replayed  the replay guard's text
  text  string  the counters' values, then "|" and the outcomes when any job was not simply created
REPLY refused  nothing is written then
  code  code
  index  int  the job refused (1-based)
CODES
  parentNotFound  -5  the parent of job `index` does not exist
  parentConflict  -7  job `index` exists with another parent
  idInFlight  -31  job `index`'s custom id is held by a staged add that has not committed
OUTCOMES
  created  1  a job's outcome: added
  duplicated  2  its custom id existed: nothing added
  deduplicated  3  a deduplication window's owner answered for it
EVENTS
  with events 2: added, waiting, delayed, waiting-children, duplicated, deduplicated, removed (dedup
  replace); with 1 or 0 none of them;
  waiting prev waiting-children on a parent's queue when a parent has nothing pending.
GLOBAL LOCK
  Ids come from {P}id, INCR'd inside, and a flow's parent and dependency keys and the deduplication
  keys follow from the jobs as written. A lone add with a reserved or custom id goes through
  handOffJobDeclared, which declares its keys.
]]
-- @include checkIntegerArgs
-- @include checkNewJobs
-- @include placeJobs
-- @include copyGroupFields
-- @include noteAttention

checkIntegerArgs("addJobs", { "guardTtl", "maxLenEvents", "now", "events" })
local now = tonumber(ARGV[ARG.now])
local jobs = {}
for i = 1, ARG_GROUP_COUNT do
  local job = copyGroupFields({}, ARG_GROUP, groupArg, i)
  job.queue = tonumber(job.queue)
  jobs[i] = job
end
local queues = {}
for g = 1, KEY_GROUP_COUNT do
  local q = copyGroupFields({ counts = 0 }, KEY_GROUP, groupKey, g)
  q.prefix = string.sub(q.idCounter, 1, -3)
  queues[g] = q
end

-- The guard is read first: a replay answers the first run's result before anything else runs (counting
-- ids before it would advance the id counter once more per replay). Written last, with the ids.
local replayed = redis.call("GET", KEYS[KEY.replayGuard])
if replayed then return replayed end
local failure = checkNewJobs(jobs, queues)
if failure then return failure end

local counters = {}
for g, q in ipairs(queues) do
  if q.counts > 0 then q.last = redis.call("INCRBY", q.idCounter, q.counts) end
  q.next = (q.last or 0) - q.counts + 1
  counters[g] = q.last or 0
end
local guardValue = table.concat(counters, ",")

local result, outcomes = placeJobs(jobs, queues, now, ARGV[ARG.maxLenEvents], tonumber(ARGV[ARG.events]))
for _, q in ipairs(queues) do noteAttention(KEYS[KEY.attention], q.prefix, now) end
if outcomes ~= "" then guardValue = guardValue .. "|" .. outcomes end
redis.call("SET", KEYS[KEY.replayGuard], guardValue, "PX", ARGV[ARG.guardTtl])
return result
