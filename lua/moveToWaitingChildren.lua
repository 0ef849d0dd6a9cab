--[[
moveToWaitingChildren: A running parent asks to wait for its children: while any is pending it
leaves active for waiting-children (its lock released); otherwise it keeps running.

KEYS
  lock  {P}<jobId>:lock
  dependencies  {P}<jobId>:dependencies
  unsuccessful  {P}<jobId>:unsuccessful
  active  {P}active
  waitingChildren  {P}waiting-children
  stalled  {P}stalled
  events  {P}events
ARGV
  jobId  string  job id
  token  string  the lock token the job was leased with
  now  int  the caller's clock (ms)
  child  string  a child key to wait for specifically, or ""
REPLY done
  moved  int  1 moved (or already moved by a replay of this call), 0 nothing pending
REPLY refused
  code  code
CODES
  lockMissing  -2  the lock is gone
  lockMismatch  -6  another token owns the lock
  childFailed  -9  a child failed (failParentOnFailure)
EVENTS
  waiting-children {jobId, prev: active}
GLOBAL LOCK
  It reads the job's hash (named from its lock's key), and a grouped parent frees its group's slot,
  whose keys are named by the gid in that hash.
]]
-- @include checkIntegerArgs
-- @include holdsLock
-- @include releaseGroupSlots
-- `now` is the waiting-children score, written after the job left active.
checkIntegerArgs("moveToWaitingChildren", { "now" })
local id = ARGV[ARG.jobId]
if redis.call("ZCARD", KEYS[KEY.unsuccessful]) > 0 then return -9 end
local lock = redis.call("GET", KEYS[KEY.lock])
if not lock then
  if redis.call("ZSCORE", KEYS[KEY.waitingChildren], id) then return 1 end
  return -2
end
if not holdsLock(lock, ARGV[ARG.token]) then return -6 end
local pending
if ARGV[ARG.child] ~= "" then
  pending = redis.call("SISMEMBER", KEYS[KEY.dependencies], ARGV[ARG.child]) == 1
else
  pending = redis.call("SCARD", KEYS[KEY.dependencies]) > 0
end
if not pending then return 0 end
redis.call("DEL", KEYS[KEY.lock])
redis.call("SREM", KEYS[KEY.stalled], id)
redis.call("LREM", KEYS[KEY.active], -1, id)
-- A grouped job frees its group's slot while it waits for its children.
local gid = redis.call("HGET", string.sub(KEYS[KEY.lock], 1, -6), "gid")
if gid then releaseGroupSlots(string.sub(KEYS[KEY.active], 1, -7), { [gid] = 1 }) end
redis.call("ZADD", KEYS[KEY.waitingChildren], ARGV[ARG.now], id)
redis.call("XADD", KEYS[KEY.events], "*", "event", "waiting-children", "jobId", id, "prev", "active")
return 1
