--[[
recoverStalled: BullMQ's stalled-job check (moveStalledJobsToWait), so nimbusq and BullMQ workers
agree on which jobs stalled. At most once per `stalledInterval` (the stalled-check key): every job
in the `stalled` snapshot whose lock is gone is moved back to the front of wait with stc + 1 (and
`defa` once past maxStalledCount, unless it is a job scheduler's iteration); then every active job
is put in the next snapshot.

KEYS
  stalled  {P}stalled
  stalledCheck  {P}stalled-check
  active  {P}active
  wait  {P}wait
  meta  {P}meta
  marker  {P}marker
  events  {P}events
  schedulers  {P}repeat (job schedulers)
  attention  <prefix>:nq:due, the sweeper's attention index: the queue is noted for its next pass
ARGV
  prefix  string  the queue key prefix {P}
  now  int  the caller's clock (ms)
  stalledInterval  int  how often the check may run (ms)
  maxStalledCount  int  stalls allowed before the job is failed
REPLY skipped  another check ran within the interval
  marker  {"skipped"}
REPLY moved
  ids  string...  the ids moved back to wait
EVENTS
  waiting prev active, then stalled, per job.
GLOBAL LOCK
  It checks the locks and writes the hashes of the jobs it finds in the stalled set and the active
  list.
]]
-- @include noteAttention
-- @include checkIntegerArgs
-- @include checkStalledJobs
checkIntegerArgs("recoverStalled", { "now", "stalledInterval", "maxStalledCount" })
local q = { prefix = ARGV[ARG.prefix] }
for name, index in pairs(KEY) do q[name] = KEYS[index] end
local moved = checkStalledJobs(q, ARGV[ARG.now], ARGV[ARG.stalledInterval], tonumber(ARGV[ARG.maxStalledCount]))
if not moved then return { "skipped" } end
if #moved > 0 then noteAttention(KEYS[KEY.attention], q.prefix, 0) end
return moved
