--[[
handOffJob: Adds one job for a caller about to start a worker invocation (Queue's `handoff`: the HTTP
API's and the producers' single adds with a worker function to kick) and, when a worker may start it
at once, leases it to that invocation in the same call: the job goes straight to active with its lock
(token, lease), processedOn and ats = 1 as a lease writes them, `nq:ho` marking the lease as handed
over (the stalled check then moves it back without counting a stall), and its id in the stalled
snapshot, so the first check after the lease lapses recovers it; the invocation is registered as a
running worker until the lease ends. Otherwise the job is added to wait as addJobs adds it.
Handed over only when the queue is not paused, has no global concurrency, no rate limit (meta max,
a limiter key, or workers that registered a limiter), fewer running workers than `maxWorkers`, and
(unless lifo) nothing in wait ahead of it. A custom id that exists is a duplicate (BullMQ's add
answers the existing job). Unflagged: the job's keys come from the ids reserved here (INCRBY of a
block: the first id is this job's, the caller keeps the rest for handOffJobDeclared, which declares its
keys); with a custom id nothing is reserved.

KEYS
  replayGuard  nimbusq's replay guard for this call, <prefix>:nq-req:<queue>:<token>
  attention  <prefix>:nq:due, the sweeper's attention index
  idCounter  {P}id
  meta  {P}meta
  limiter  {P}limiter
  workers  {P}nq:workers
  wait  {P}wait
  active  {P}active
  stalled  {P}stalled
  marker  {P}marker
  events  {P}events
ARGV
  guardTtl  how long the replay guard lives (ms)
  maxLenEvents  the events stream's approximate cap (MAXLEN ~)
  now  the caller's clock (epoch ms)
  events  which events to write: 2 all, 1 final only or 0 none (both write no add events)
  customId  the custom job id (opts.jobId), or "" to reserve a block of ids and take its first
  reserve  how many ids to reserve (at least 1) when customId is ""
  idEpoch  ignored ("")
  name  job name
  data  job data as JSON text
  opts  job options as JSON text, BullMQ's short keys
  timestamp  creation time (ms)
  lifo  "1" to put the job at the front of wait (opts.lifo), else ""
  token  the lock token of a handed-over job
  invocation  the id the invocation registers under
  maxWorkers  most running worker invocations: at this many the job waits
  leaseMs  the lease when no worker has registered one (meta nq:leaseMs)
REPLY  a replayed call writes nothing and answers the first call's reply
  id  string  the job's id
  outcome  int  1 created, 2 duplicated (the custom id exists: nothing written), or a code (CODES)
  handed  int  1 handed over (active, locked with token), 0 added to wait
  running  int  worker invocations running before this call (registrations not lapsed)
  leaseMs  int  the handed-over lease (ms), 0 when not handed over
  reservedLast  int  the last id of the block reserved by this call, 0 for none
  idEpoch  string  the queue's id epoch (meta nq:idEpoch, set by the first reservation), "" for none
CODES
  idInFlight  -31  the custom id is held by a staged add that has not committed
  staleIds  -32  (handOffJobDeclared) the reserved id's block predates the queue's id epoch
OUTCOMES
  created  1  outcome: the job was added
  duplicated  2  outcome: its custom id existed, nothing written
  handed  1  handed: leased to the invocation about to start
  waiting  0  handed: added to wait
EVENTS
  with events 2: added, waiting, and active prev waiting when handed over, or duplicated; with 1 or
  0 none.
]]
-- @include checkIntegerArgs
-- @include handOffNew

checkIntegerArgs("handOffJob", { "guardTtl", "maxLenEvents", "now", "events", "timestamp", "maxWorkers", "leaseMs", "reserve" })
local replayed = redis.call("GET", KEYS[KEY.replayGuard])
if replayed then return replayedHandOff(replayed) end
local id, last, epoch = ARGV[ARG.customId], 0, ""
if id == "" then
  local reserve = math.max(1, tonumber(ARGV[ARG.reserve]))
  last = redis.call("INCRBY", KEYS[KEY.idCounter], reserve)
  id = string.format("%d", last - reserve + 1)
  -- The queue's id epoch: a block is good while meta still holds it (obliterate deletes both).
  epoch = redis.call("HGET", KEYS[KEY.meta], "nq:idEpoch")
  if not epoch then
    epoch = ARGV[ARG.token]
    redis.call("HSET", KEYS[KEY.meta], "nq:idEpoch", epoch)
  end
end
return handOffNew(id, string.sub(KEYS[KEY.idCounter], 1, -3) .. id, ARGV[ARG.customId] ~= "", last, epoch)
