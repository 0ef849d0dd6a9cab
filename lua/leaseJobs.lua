--[[
leaseJobs: Leases up to `count` jobs to one worker: promotes due delayed jobs, honours pause, global
concurrency and the rate limiter, moves jobs from wait (then prioritized) to active with a lock each,
and returns their hashes. A replayed call returns the same jobs again.

KEYS
  meta  {P}meta
  wait  {P}wait
  active  {P}active
  prioritized  {P}prioritized
  priorityCounter  {P}pc
  delayed  {P}delayed
  limiter  {P}limiter
  marker  {P}marker
  events  {P}events
  replayGuard  nimbusq's replay guard for this call
ARGV
  prefix  the queue key prefix {P}
  token  the lock token of this lease
  now  the caller's clock (ms)
  leaseMs  lock time-to-live (ms)
  count  most jobs to lease
  limiterMax  the worker's limiter max, 0 for none (meta.max wins)
  limiterDuration  the worker's limiter window (ms), 0 for none (wins over meta.duration)
  workerName  written as `pb` when not ""
  guardTtl  how long the replay guard lives (ms)
RETURNS
  {status, info, jobId, {field, value, …}, …}. status 0: leased (info: when the earliest delayed job
  is due, ms, or 0; only when nothing was leased); 1 paused; 2 rate limited (info: the limiter's
  TTL, ms); 3 at global concurrency. Hashes are as read before processedOn/ats/pb were written.
EVENTS
  waiting prev delayed (promotion), active prev waiting.
]]
-- @include promoteDelayedJobs
-- @include takeReadyJobs
-- @include encodeIds
-- @include decodeIds
local prefix, token = ARGV[ARG.prefix], ARGV[ARG.token]
local now, count = tonumber(ARGV[ARG.now]), tonumber(ARGV[ARG.count])
local replayed = redis.call("GET", KEYS[KEY.replayGuard])
if replayed then
  local out = { 0, 0 }
  for _, id in ipairs(decodeIds(replayed)) do
    out[#out + 1] = id
    out[#out + 1] = redis.call("HGETALL", prefix .. id)
  end
  return out
end
local meta = redis.call("HMGET", KEYS[KEY.meta], "paused", "concurrency", "max", "duration")
local promoted = promoteDelayedJobs(prefix, KEYS[KEY.delayed], KEYS[KEY.wait], KEYS[KEY.prioritized],
  KEYS[KEY.priorityCounter], KEYS[KEY.events], now, 1000)
-- Promoted jobs get `delay` 0; those leased below get it in the same write as processedOn.
local function resetDelays(except)
  for id in pairs(promoted) do
    if not except[id] then redis.call("HSET", prefix .. id, "delay", 0) end
  end
end
local maxJobs = tonumber(meta[3]) or tonumber(ARGV[ARG.limiterMax]) or 0
-- The limiter is read even without a configured max: a manual rate limit (Queue/Worker.rateLimit)
-- sets it to 2^53 - 1, which no max reaches, so it holds every worker back until it expires.
local used = tonumber(redis.call("GET", KEYS[KEY.limiter])) or 0
if maxJobs > 0 or used >= 9007199254740991 then
  if used >= maxJobs then
    local ttl = redis.call("PTTL", KEYS[KEY.limiter])
    if ttl > 0 then
      resetDelays({})
      return { 2, ttl }
    end
    redis.call("DEL", KEYS[KEY.limiter])
    used = 0
  end
  if maxJobs > 0 then count = math.min(count, maxJobs - used) end
end
if meta[1] then
  resetDelays({})
  return { 1, 0 }
end
if meta[2] then
  count = math.min(count, tonumber(meta[2]) - redis.call("LLEN", KEYS[KEY.active]))
  if count <= 0 then
    resetDelays({})
    return { 3, 0 }
  end
end
local ids = takeReadyJobs(KEYS[KEY.wait], KEYS[KEY.prioritized], KEYS[KEY.active], count)
if #ids == 0 then
  resetDelays({})
  local first = redis.call("ZRANGE", KEYS[KEY.delayed], 0, 0, "WITHSCORES")
  return { 0, first[2] and math.floor(tonumber(first[2]) / 4096) or 0 }
end
local out, leased, taken, counted = { 0, 0 }, {}, {}, 0
for _, id in ipairs(ids) do
  local key = prefix .. id
  local hash = promoted[id] or redis.call("HGETALL", key)
  if #hash == 0 then
    redis.call("LREM", KEYS[KEY.active], -1, id)
  else
    local started, deferred = 0, false
    for i = 1, #hash, 2 do
      if hash[i] == "ats" then started = tonumber(hash[i + 1]) or 0 elseif hash[i] == "defa" then deferred = true end
      if promoted[id] and hash[i] == "delay" then hash[i + 1] = "0" end
    end
    if not deferred then counted = counted + 1 end
    redis.call("SET", key .. ":lock", token, "PX", ARGV[ARG.leaseMs])
    local fields = { "processedOn", now, "ats", started + 1 }
    if ARGV[ARG.workerName] ~= "" then table.insert(fields, "pb"); table.insert(fields, ARGV[ARG.workerName]) end
    if promoted[id] then table.insert(fields, "delay"); table.insert(fields, 0) end
    redis.call("HSET", key, unpack(fields))
    redis.call("XADD", KEYS[KEY.events], "*", "event", "active", "jobId", id, "prev", "waiting")
    leased[#leased + 1] = id
    taken[id] = true
    out[#out + 1] = id
    out[#out + 1] = hash
  end
end
if maxJobs > 0 and counted > 0 then
  local duration = tonumber(ARGV[ARG.limiterDuration]) or 0
  if duration <= 0 then duration = tonumber(meta[4]) or 0 end
  if redis.call("INCRBY", KEYS[KEY.limiter], counted) == counted and duration > 0 then
    redis.call("PEXPIRE", KEYS[KEY.limiter], math.floor(duration))
  end
end
resetDelays(taken)
redis.call("ZADD", KEYS[KEY.marker], 0, "0")
redis.call("SET", KEYS[KEY.replayGuard], encodeIds(leased), "PX", ARGV[ARG.guardTtl])
return out
