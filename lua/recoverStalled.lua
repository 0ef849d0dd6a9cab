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
ARGV
  prefix  the queue key prefix {P}
  now  the caller's clock (ms)
  stalledInterval  how often the check may run (ms)
  maxStalledCount  stalls allowed before the job is failed
RETURNS
  The ids moved back to wait, or {"skipped"} when another check ran within the interval.
EVENTS
  waiting prev active, then stalled, per job.
]]
-- @include isQueuePausedOrMaxed
local prefix = ARGV[ARG.prefix]
if redis.call("EXISTS", KEYS[KEY.stalledCheck]) == 1 then return { "skipped" } end
redis.call("SET", KEYS[KEY.stalledCheck], ARGV[ARG.now], "PX", ARGV[ARG.stalledInterval])
local maxLen = redis.call("HGET", KEYS[KEY.meta], "opts.maxLenEvents") or "10000"
redis.call("XTRIM", KEYS[KEY.events], "MAXLEN", "~", maxLen)
local candidates = redis.call("SMEMBERS", KEYS[KEY.stalled])
redis.call("DEL", KEYS[KEY.stalled])
local moved = {}
for _, id in ipairs(candidates) do
  if string.sub(id, 1, 2) == "0:" then
    redis.call("LREM", KEYS[KEY.active], 1, id)
  elseif redis.call("EXISTS", prefix .. id .. ":lock") == 0 and redis.call("LREM", KEYS[KEY.active], 1, id) > 0 then
    local jobKey = prefix .. id
    local stalls = redis.call("HINCRBY", jobKey, "stc", 1)
    local schedulerId = redis.call("HGET", jobKey, "rjk")
    local isIteration = schedulerId and (redis.call("EXISTS", prefix .. "repeat:" .. schedulerId) == 1
      or redis.call("ZSCORE", KEYS[KEY.schedulers], schedulerId) ~= false)
    if stalls > tonumber(ARGV[ARG.maxStalledCount]) and not isIteration then
      redis.call("HSET", jobKey, "defa", "job stalled more than allowable limit")
    end
    redis.call("RPUSH", KEYS[KEY.wait], id)
    redis.call("XADD", KEYS[KEY.events], "*", "event", "waiting", "jobId", id, "prev", "active")
    redis.call("XADD", KEYS[KEY.events], "*", "event", "stalled", "jobId", id)
    moved[#moved + 1] = id
  end
end
if #moved > 0 and not isQueuePausedOrMaxed(KEYS[KEY.meta], KEYS[KEY.active]) then
  redis.call("ZADD", KEYS[KEY.marker], 0, "0")
end
local active = redis.call("LRANGE", KEYS[KEY.active], 0, -1)
for from = 1, #active, 4000 do
  redis.call("SADD", KEYS[KEY.stalled], unpack(active, from, math.min(from + 3999, #active)))
end
return moved
