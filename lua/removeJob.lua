--[[
removeJob: Removes one job that no worker holds, as BullMQ's removeJob does without removeChildren: its
link to its parent first (a parent left with nothing pending goes to the end of wait), then the job
from whichever structure has it, its dedup window if it owns it, and its keys.

KEYS
  jobKey  {P}<jobId>
  lock  {P}<jobId>:lock
  meta  {P}meta
  completed  {P}completed
  waitingChildren  {P}waiting-children
  delayed  {P}delayed
  failed  {P}failed
  prioritized  {P}prioritized
  wait  {P}wait
  legacyPaused  {P}paused
  active  {P}active
  events  {P}events
ARGV
  prefix  the queue key prefix {P}
  jobId  the job id
RETURNS
  1 removed, 0 no such job, -20 the job is locked (leased by a worker).
EVENTS
  waiting prev waiting-children on a released parent's queue, then removed {jobId, prev} with
  BullMQ's state names (wait, paused, active, delayed, prioritized, completed, failed,
  waiting-children).
]]
-- @include isQueuePausedOrMaxed
-- @include removeJobKeys
local jobKey, jobId = KEYS[KEY.jobKey], ARGV[ARG.jobId]
if redis.call("EXISTS", jobKey) == 0 then return 0 end
if redis.call("EXISTS", KEYS[KEY.lock]) == 1 then return -20 end
local fields = redis.call("HMGET", jobKey, "parentKey", "parent", "deid")
local parentKey = fields[1]
if parentKey and redis.call("EXISTS", parentKey) == 1
    and redis.call("SREM", parentKey .. ":dependencies", jobKey) == 1
    and redis.call("SCARD", parentKey .. ":dependencies") == 0 then
  -- The parent's prefix is its key without its id; the `parent` field names the queue key. Like
  -- BullMQ, a parent released by a removal goes to the end of wait whatever its priority or delay.
  local queueKey = string.match(fields[2] or "", '"queueKey":"([^"]*)"')
  if queueKey then
    local parentPrefix = queueKey .. ":"
    local parentId = string.sub(parentKey, #parentPrefix + 1)
    if redis.call("ZREM", parentPrefix .. "waiting-children", parentId) == 1 then
      redis.call("RPUSH", parentPrefix .. "wait", parentId)
      if not isQueuePausedOrMaxed(parentPrefix .. "meta", parentPrefix .. "active") then
        redis.call("ZADD", parentPrefix .. "marker", 0, "0")
      end
      redis.call("XADD", parentPrefix .. "events", "*", "event", "waiting", "jobId", parentId,
        "prev", "waiting-children")
    end
  end
end
local prev = "unknown"
local zsets = { { KEY.completed, "completed" }, { KEY.waitingChildren, "waiting-children" },
  { KEY.delayed, "delayed" }, { KEY.failed, "failed" }, { KEY.prioritized, "prioritized" } }
for _, entry in ipairs(zsets) do
  if redis.call("ZREM", KEYS[entry[1]], jobId) == 1 then prev = entry[2] break end
end
if prev == "unknown" then
  local lists = { { KEY.wait, "wait" }, { KEY.legacyPaused, "paused" }, { KEY.active, "active" } }
  for _, entry in ipairs(lists) do
    if redis.call("LREM", KEYS[entry[1]], 0, jobId) > 0 then prev = entry[2] break end
  end
end
if fields[3] then
  local dedupKey = ARGV[ARG.prefix] .. "de:" .. fields[3]
  if redis.call("GET", dedupKey) == jobId then
    redis.call("DEL", dedupKey, ARGV[ARG.prefix] .. "dn:" .. fields[3])
  end
end
removeJobKeys(jobKey)
local maxLen = redis.call("HGET", KEYS[KEY.meta], "opts.maxLenEvents") or "10000"
redis.call("XADD", KEYS[KEY.events], "MAXLEN", "~", maxLen, "*", "event", "removed", "jobId", jobId, "prev", prev)
return 1
