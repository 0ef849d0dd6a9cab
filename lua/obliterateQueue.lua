--[[
obliterateQueue: One bounded step of Queue.obliterate, as BullMQ's obliterate: refuses a queue that is
not paused, or that has active jobs unless forced; deletes up to `count` jobs the bulk way — active
(their locks too), delayed, job schedulers, completed, wait, the legacy paused list, prioritized,
failed, and (unlike BullMQ, which leaves them behind) waiting-children, then grouped jobs — and, once
none is left, the queue's own keys (a group's rate-limit window key expires by itself). Safe to replay: a replayed step returns its first answer.

KEYS
  meta  {P}meta
  replayGuard  nimbusq's replay guard for this step, <prefix>:nq-req:<queue>:<token> — beside the
    queue, not under {P}, so the final step leaves no key of the queue and its replay still answers 0
ARGV
  prefix  string  the queue key prefix {P}
  count  int  most jobs (and schedulers) this step deletes
  force  flag  "1" to delete active jobs too
  guardTtl  int  how long the replay guard lives (ms)
REPLY step
  left  {int}  0 the queue is gone, 1 jobs are left for another step
REPLY refused  nothing is written then
  code  code
CODES
  notPaused  -1  the queue is not paused
  activeJobs  -2  it has active jobs and force was not given
EVENTS
  none on this queue (its stream is deleted at the end); a parent in another queue left with nothing
  pending goes to that queue's wait without an event, as in BullMQ.
GLOBAL LOCK
  It deletes every job it finds in the queue's structures with all its sub-keys.
]]
-- @include replayedResult
-- @include saveResult
-- @include deleteJob
-- @include groupKeys
-- @include knownGroups
local replayed = replayedResult(KEYS[KEY.replayGuard])
if replayed then return replayed end
local prefix, remaining = ARGV[ARG.prefix], tonumber(ARGV[ARG.count])
if redis.call("HEXISTS", KEYS[KEY.meta], "paused") == 0 then return -1 end
local active = redis.call("LRANGE", prefix .. "active", 0, remaining - 1)
if #active > 0 and ARGV[ARG.force] ~= "1" then return -2 end

local function deleteAll(ids)
  for _, id in ipairs(ids) do
    local f = redis.call("HMGET", prefix .. id, "parentKey", "parent", "deid")
    deleteJob(prefix, id, f[1], f[2], f[3])
  end
  remaining = remaining - #ids
end
local function removeFromSet(key, ids)
  for from = 1, #ids, 4000 do
    redis.call("ZREM", key, unpack(ids, from, math.min(from + 3999, #ids)))
  end
end

for _, id in ipairs(active) do redis.call("DEL", prefix .. id .. ":lock") end
deleteAll(active)
redis.call("LTRIM", prefix .. "active", #active, -1)
local order = { "delayed", "repeat", "completed", "wait", "paused", "prioritized", "failed", "waiting-children" }
for _, state in ipairs(order) do
  if remaining <= 0 then break end
  local key = prefix .. state
  if state == "wait" or state == "paused" then
    local ids = redis.call("LRANGE", key, 0, remaining - 1)
    deleteAll(ids)
    redis.call("LTRIM", key, #ids, -1)
  elseif state == "repeat" then
    local ids = redis.call("ZRANGE", key, 0, remaining - 1)
    for _, id in ipairs(ids) do redis.call("DEL", key .. ":" .. id) end
    removeFromSet(key, ids)
    remaining = remaining - #ids
  else
    local ids = redis.call("ZRANGE", key, 0, remaining - 1)
    deleteAll(ids)
    removeFromSet(key, ids)
  end
end
-- Grouped jobs (docs/groups.md): delayed, in the inbox, then each known group's ready jobs. A group
-- with ready jobs is in the ring, or out of it paused, rate-limited or full (then it has running jobs).
if remaining > 0 then
  local ids = redis.call("ZRANGE", prefix .. "nq:gdelayed", 0, remaining - 1)
  deleteAll(ids)
  removeFromSet(prefix .. "nq:gdelayed", ids)
end
if remaining > 0 then
  local ids = redis.call("LRANGE", prefix .. "nq:ginbox", 0, remaining - 1)
  deleteAll(ids)
  redis.call("LTRIM", prefix .. "nq:ginbox", #ids, -1)
end
if remaining > 0 then
  for _, gid in ipairs(knownGroups(groupKeys(prefix))) do
    if remaining <= 0 then break end
    local ids = redis.call("ZRANGE", prefix .. "nq:g:" .. gid, 0, remaining - 1)
    deleteAll(ids)
    removeFromSet(prefix .. "nq:g:" .. gid, ids)
  end
end
if remaining <= 0 then return saveResult(KEYS[KEY.replayGuard], { 1 }, ARGV[ARG.guardTtl]) end
redis.call("DEL", prefix .. "nq:groups", prefix .. "nq:gc", prefix .. "nq:gpaused", prefix .. "nq:grun",
  prefix .. "nq:glimited", prefix .. "nq:ginbox", prefix .. "nq:gdelayed")
redis.call("DEL", prefix .. "events", prefix .. "delay", prefix .. "stalled-check", prefix .. "stalled",
  prefix .. "id", prefix .. "pc", prefix .. "marker", KEYS[KEY.meta], prefix .. "metrics:completed",
  prefix .. "metrics:completed:data", prefix .. "metrics:failed", prefix .. "metrics:failed:data",
  prefix .. "nq:counts")
return saveResult(KEYS[KEY.replayGuard], { 0 }, ARGV[ARG.guardTtl])
