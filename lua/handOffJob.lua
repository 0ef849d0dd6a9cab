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
(unless lifo) nothing in wait ahead of it.

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
  guardTtl  int  how long the replay guard lives (ms)
  maxLenEvents  int  the events stream's approximate cap (MAXLEN ~)
  now  int  the caller's clock (epoch ms)
  events  int  which events to write: 2 all, 1 final only or 0 none (both write no add events)
  reserve  int  how many ids to reserve (at least 1)
  name  string  job name
  data  string  job data as JSON text
  opts  string  job options as JSON text, BullMQ's short keys
  timestamp  int  creation time (ms)
  lifo  flag  "1" to put the job at the front of wait (opts.lifo), else ""
  token  string  the lock token of a handed-over job
  invocation  string  the id the invocation registers under
  maxWorkers  int  most running worker invocations: at this many the job waits
  leaseMs  int  the lease when no worker has registered one (meta nq:leaseMs)
REPLY  a replayed call answers the first call's reply (its INCRBY reserves a block again, left unused)
  id  string  the job's id
  outcome  int  1 created
  handed  int  1 handed over (active, locked with token), 0 added to wait
  running  int  worker invocations running before this call (registrations not lapsed)
  leaseMs  int  the handed-over lease (ms), 0 when not handed over
  reservedLast  int  the last id of the block reserved by this call, 0 for none
  idEpoch  string  the queue's id epoch (meta nq:idEpoch, started by the first reservation)
OUTCOMES
  created  1  outcome: the job was added
  handed  1  handed: leased to the invocation about to start
  waiting  0  handed: added to wait
EVENTS
  with events 2: added, waiting, and active prev waiting when handed over; with 1 or 0 none.
GLOBAL LOCK
  It reserves a block of ids with INCRBY {P}id (the first is this job's, the caller keeps the rest),
  so the new job's hash and lock are named inside; the adds with an id of that block or a custom id
  go through handOffJobDeclared, which declares them.
]]
-- @include checkIntegerArgs
-- @include handOffNew

checkIntegerArgs("handOffJob", { "guardTtl", "maxLenEvents", "now", "events", "timestamp", "maxWorkers", "leaseMs", "reserve" })
local reserve = math.max(1, tonumber(ARGV[ARG.reserve]))
local last = redis.call("INCRBY", KEYS[KEY.idCounter], reserve)
local id = string.format("%d", last - reserve + 1)
return handOffNew(id, string.sub(KEYS[KEY.idCounter], 1, -3) .. id, false, last)
