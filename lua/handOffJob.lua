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
answers the existing job). Unflagged: the job's keys come from the id INCR'd here.

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
  customId  the custom job id (opts.jobId), or "" for the next counter value
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
CODES
  idInFlight  -31  the custom id is held by a staged add that has not committed
EVENTS
  with events 2: added, waiting, and active prev waiting when handed over, or duplicated; with 1 or
  0 none.
]]
-- @include checkIntegerArgs
-- @include noteAttention

checkIntegerArgs("handOffJob", { "guardTtl", "maxLenEvents", "now", "events", "timestamp", "maxWorkers", "leaseMs" })
local replayed = redis.call("GET", KEYS[KEY.replayGuard])
if replayed then
  local id, outcome, handed, running, lease = string.match(replayed, "^(.*)|(%d)|(%d)|(%d+)|(%d+)$")
  return { id, tonumber(outcome), tonumber(handed), tonumber(running), tonumber(lease) }
end
local now = tonumber(ARGV[ARG.now])
local prefix = string.sub(KEYS[KEY.idCounter], 1, -3)
local level = tonumber(ARGV[ARG.events])
local events, maxLen = KEYS[KEY.events], ARGV[ARG.maxLenEvents]
local id = ARGV[ARG.customId]
local running = redis.call("ZCOUNT", KEYS[KEY.workers], "(" .. now, "+inf")
if id == "" then
  id = string.format("%d", redis.call("INCR", KEYS[KEY.idCounter]))
elseif redis.call("EXISTS", prefix .. id) == 1 then
  -- Only a staged add's hash carries a TTL: its job is not added until that add commits.
  if redis.call("PTTL", prefix .. id) > 0 then return { id, -31, 0, running, 0 } end
  if level >= 2 then
    redis.call("XADD", events, "MAXLEN", "~", maxLen, "*", "event", "duplicated", "jobId", id)
  end
  return { id, 2, 0, running, 0 }
end
local key = prefix .. id
local meta = redis.call("HMGET", KEYS[KEY.meta], "paused", "concurrency", "max", "nq:limited", "nq:leaseMs")
local lifo = ARGV[ARG.lifo] == "1"
local handed = not meta[1] and not meta[2] and not meta[3] and meta[4] ~= "1"
  and running < tonumber(ARGV[ARG.maxWorkers])
if handed then handed = redis.call("EXISTS", KEYS[KEY.limiter]) == 0 end
if handed and not lifo then handed = redis.call("LLEN", KEYS[KEY.wait]) == 0 end

local lease = handed and (tonumber(meta[5]) or tonumber(ARGV[ARG.leaseMs])) or 0
local fields = { "name", ARGV[ARG.name], "data", ARGV[ARG.data], "opts", ARGV[ARG.opts],
  "timestamp", ARGV[ARG.timestamp], "delay", 0, "priority", 0 }
if handed then
  for _, v in ipairs({ "processedOn", now, "ats", 1, "nq:ho", 1 }) do fields[#fields + 1] = v end
end
redis.call("HSET", key, unpack(fields))
if level >= 2 then
  redis.call("XADD", events, "*", "event", "added", "jobId", id, "name", ARGV[ARG.name])
  redis.call("XADD", events, "MAXLEN", "~", maxLen, "*", "event", "waiting", "jobId", id)
end
if handed then
  redis.call("LPUSH", KEYS[KEY.active], id)
  redis.call("SET", key .. ":lock", ARGV[ARG.token], "PX", lease)
  redis.call("SADD", KEYS[KEY.stalled], id)
  if level >= 2 then redis.call("XADD", events, "*", "event", "active", "jobId", id, "prev", "waiting") end
  redis.call("ZADD", KEYS[KEY.workers], now + lease, ARGV[ARG.invocation])
  noteAttention(KEYS[KEY.attention], prefix, now + lease)
else
  redis.call(lifo and "RPUSH" or "LPUSH", KEYS[KEY.wait], id)
  redis.call("ZADD", KEYS[KEY.marker], 0, "0")
  noteAttention(KEYS[KEY.attention], prefix, now)
end
local reply = { id, 1, handed and 1 or 0, running, lease }
redis.call("SET", KEYS[KEY.replayGuard], table.concat(reply, "|"), "PX", ARGV[ARG.guardTtl])
return reply
