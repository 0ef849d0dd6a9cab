--[[
ackPromoteAndLease: The same worker call as ackAndLease without declared keys (Upstash runs it under
its global lock): it also promotes due delayed jobs, prunes finished sets (removeOnComplete /
removeOnFail by count or age, for the entries acked here and for `prunes`), and leases from the
right of wait and the lowest prioritized scores, then round-robin from the groups (lua/includes/
takeGroupJobs.lua: their keys are built here). A worker's first call, and a call after a due delayed
job was seen, when pruning is owed, or when no ungrouped job was peeked.

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
  limiter  {P}limiter
  marker  {P}marker
  events  {P}events
  replayGuard  nimbusq's replay guard for this call
  finishCounts  {P}nq:counts: jobs completed and failed by nimbusq workers (the sweeper's metrics read and reset it)
  attention  <prefix>:nq:due, the sweeper's attention index: a call that acks or leases notes the queue
  workers  {P}nq:workers, the worker registry: `unregister` leaves it
ARGV
  prefix  string  the queue key prefix {P}
  leaseToken  string  the lock token of the jobs this call leases
  now  int  the caller's clock (ms): finishedOn, processedOn
  leaseMs  int  lock time-to-live (ms)
  count  int  most jobs to lease (0: ack only)
  peek  int  how many of the next ready ids to return
  candidates  string  ignored ("")
  limiterMax  int  the worker's limiter max, 0 for none (meta.max wins)
  limiterDuration  int  the worker's limiter window (ms), 0 for none (wins over meta.duration)
  workerName  string  written as `pb` when not ""
  guardTtl  int  how long the replay guard lives (ms)
  maxLenEvents  int  the events stream's approximate cap (MAXLEN ~)
  events  int  which events to write: 2 all, 1 final only (completed, failed, retries-exhausted), 0 none
  prunes  string  finished sets to prune: "target|keepCount|keepAge|keepLimit;…"
  unregister  string  the invocation's registry id when this may be its drain's last call, else "": removed
    when the call leaves nothing ready, leased or delayed (the drain then ends)
  groupConcurrency  int  the worker's group.concurrency, the most jobs of one group running at once
    across every worker (BullMQ Pro's), 0 for none
  groupLimitMax  int  the worker's group.limit.max, the most jobs of one group started per window, 0 for none
  groupLimitDuration  int  the worker's group.limit.duration, the window (ms), 0 for none
ARGV repeated jobs
  id  string  job id
  token  string  the lock token the job was leased with
  outcome  "completed"|"failed"|"delayed"|"waiting"|"returned"  how the job ended: done, failed for good, retried later or now, handed back
  value  string  returnvalue JSON (completed) or failedReason text ("" for none)
  attemptsMade  int?  the new atm value, "" to leave it
  extra  string  the entry's other fields that differ from their defaults, as encodeIds of name, value, …:
    stacktrace (""), due (0), priority (0), lifo (""), keepCount (-1), keepAge (0), keepLimit (0),
    attempts (0), parentKey, parentPrefix, parentPolicy, dedupId, deferred, deadLetter, deadLetterId,
    deadLetterName, deadLetterData, deadLetterOpts, group (all "") — see ackEntries for their meaning
REPLY  a replayed call writes nothing and answers the first call's codes and jobs
  status  int  0 leased (or nothing asked), 1 paused, 2 rate limited, 3 at global concurrency
  info  int  rate limited: the limiter's TTL (ms)
  readyLeft  int  1 when jobs wait after this call
  nextDue  int  the earliest delayed job's due time (ms), 0 for none (after promotion)
  codeCount  int  how many entries were acked
  codes  int[codeCount]  per acked entry: 1 done, or a code (CODES; -4 and -9 when completing): the
    job is untouched on any code but 1
  peekCount  int  how many ids were peeked
  peeked  string[peekCount]  the ids peeked for the next call
  jobs  (jobId string, fields hash)...  each leased job's hash as read before processedOn/ats/pb were
    written
CODES
  lockMissing  -2  the job's lock is gone
  notInState  -3  the job is not active
  pendingDependencies  -4  its children are still pending
  lockMismatch  -6  another token owns the lock
  childFailed  -9  a child failed
OUTCOMES
  leased  0  status: leased (or nothing asked)
  paused  1  status: the queue is paused
  rateLimited  2  status: rate limited (info is the limiter's TTL)
  maxed  3  status: at the queue's global concurrency
  done  1  an acked entry's code: done
EVENTS
  with events 2: active, completed, failed, retries-exhausted, delayed, waiting prev active, drained, waiting prev delayed (promotion);
  with 1: completed, failed, retries-exhausted; waiting prev waiting-children on a released parent's
  queue and the dead-letter queue's added and waiting (or duplicated) at every level.
GLOBAL LOCK
  It promotes due delayed jobs, prunes finished sets and leases jobs it finds inside the call (and
  grouped jobs from the groups' keys it reads), so their hashes and locks cannot be named before it
  runs. The worker calls it only when promotion or pruning is owed, for groups, and as a drain's first
  call; every call in between is ackAndLease, which declares all its keys.
]]
-- @include cycleJobs
return cycleJobs(true)
