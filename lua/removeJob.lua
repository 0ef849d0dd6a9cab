--[[
removeJob: Removes a job as BullMQ's job.remove({ removeChildren }): refused while a worker holds it
(or, with its children, any pending job below it) and for a job scheduler's current iteration;
otherwise its link to its parent first (a parent left with nothing pending goes to the end of wait),
then its children depth-first when asked (across queues), then the job from whichever structure has
it, its dedup window if it owns it, and its keys. Safe to replay: a second run finds nothing to do.

KEYS
  jobKey  {P}<jobId>
  schedulers  {P}repeat
ARGV
  prefix  string  the queue key prefix {P}
  jobId  string  the job id
  removeChildren  flag  "1" to remove its children too (BullMQ's default)
REPLY done
  removed  int  1 removed, 0 no such job (any stray id of it is still taken out of the queue's
    structures)
REPLY refused  nothing is written then
  code  code
CODES
  jobBelongsToScheduler  -8  the job is its scheduler's current iteration
  jobLocked  -20  the job (or a pending child) is locked
EVENTS
  removed {jobId, prev} for each job removed, children first, on each job's own queue, with BullMQ's
  state names (wait, paused, active, delayed, prioritized, completed, failed, waiting-children); waiting
  prev waiting-children for a parent left with nothing pending.
GLOBAL LOCK
  It walks the job's children from its dependencies set and its parent from its hash: their keys are
  known only inside.
]]
-- @include isSchedulerIteration
-- @include isJobTreeLocked
-- @include removeJobTree
local jobKey, jobId, prefix = KEYS[KEY.jobKey], ARGV[ARG.jobId], ARGV[ARG.prefix]
local withChildren = ARGV[ARG.removeChildren] == "1"
if isSchedulerIteration(jobId, redis.call("HGET", jobKey, "rjk"), KEYS[KEY.schedulers]) then return -8 end
if isJobTreeLocked(jobKey, withChildren) then return -20 end
local existed = redis.call("EXISTS", jobKey)
removeJobTree(prefix, jobId, withChildren)
return existed
