#!lua flags=allow-key-locking
--[[
handOffJobDeclared: handOffJob (see its header) for a job whose id is known before the call — a
custom id, or one of a block handOffJob reserved — under Upstash's key-based locking: every key it
touches is in KEYS, the job's hash and lock among them, and it reserves nothing.

KEYS
  replayGuard  nimbusq's replay guard for this call, <prefix>:nq-req:<queue>:<token>
  attention  <prefix>:nq:due, the sweeper's attention index
  idCounter  {P}id: only its name is read (the queue key prefix); nothing is reserved here
  meta  {P}meta
  limiter  {P}limiter
  workers  {P}nq:workers
  wait  {P}wait
  active  {P}active
  stalled  {P}stalled
  marker  {P}marker
  events  {P}events
  job  the job's hash, {P}<id>
  lock  its lock, {P}<id>:lock
ARGV
  guardTtl  int  how long the replay guard lives (ms)
  maxLenEvents  int  the events stream's approximate cap (MAXLEN ~)
  now  int  the caller's clock (epoch ms)
  events  int  which events to write: 2 all, 1 final only or 0 none (both write no add events)
  id  string  the job's id: a custom one, or one handOffJob reserved
  custom  flag  "1" when the id is a custom one (it may exist), else ""
  idEpoch  string  the epoch handOffJob answered with the reserved id's block ("" with a custom id)
  name  string  job name
  data  string  job data as JSON text
  opts  string  job options as JSON text, BullMQ's short keys
  timestamp  int  creation time (ms)
  lifo  flag  "1" to put the job at the front of wait (opts.lifo), else ""
  token  string  the lock token of a handed-over job
  invocation  string  the id the invocation registers under
  maxWorkers  int  most running worker invocations: at this many the job waits
  leaseMs  int  the lease when no worker has registered one (meta nq:leaseMs)
REPLY  a replayed call writes nothing and answers the first call's reply
  id  string  the job's id
  outcome  int  1 created, 2 duplicated (the custom id exists: nothing written), or a code (CODES)
  handed  int  1 handed over (active, locked with token), 0 added to wait
  running  int  worker invocations running before this call (registrations not lapsed)
  leaseMs  int  the handed-over lease (ms), 0 when not handed over
  reservedLast  int  always 0
  idEpoch  string  always ""
CODES
  idInFlight  -31  the custom id is held by a staged add that has not committed
  staleIds  -32  the reserved id's block predates the queue's id epoch (an obliterate since): nothing
    is written; reserve a new block
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

checkIntegerArgs("handOffJobDeclared", { "guardTtl", "maxLenEvents", "now", "events", "timestamp", "maxWorkers", "leaseMs" })
return handOffNew(ARGV[ARG.id], KEYS[KEY.job], ARGV[ARG.custom] == "1", 0, ARGV[ARG.idEpoch])
