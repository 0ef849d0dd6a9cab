--[[
removeJob: Removes one job that no worker holds: from whichever structure has it, with its keys, its
dedup key if it owns it, and its link to its parent (which is released when nothing else is pending).

KEYS
  jobKey  {P}<jobId>
  lock  {P}<jobId>:lock
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
  now  the caller's clock (ms)
RETURNS
  1 removed, 0 no such job, -20 the job is locked (leased by a worker).
EVENTS
  removed {jobId, prev}; waiting prev waiting-children on a released parent's queue.
]]
-- @include releaseParent
local jobKey, jobId = KEYS[KEY.jobKey], ARGV[ARG.jobId]
if redis.call("EXISTS", jobKey) == 0 then return 0 end
if redis.call("EXISTS", KEYS[KEY.lock]) == 1 then return -20 end
local prev = "unknown"
local zsets = { { KEY.completed, "completed" }, { KEY.waitingChildren, "waiting-children" },
  { KEY.delayed, "delayed" }, { KEY.failed, "failed" }, { KEY.prioritized, "prioritized" } }
for _, entry in ipairs(zsets) do
  if redis.call("ZREM", KEYS[entry[1]], jobId) == 1 then prev = entry[2] break end
end
if prev == "unknown" then
  local lists = { { KEY.wait, "waiting" }, { KEY.legacyPaused, "paused" }, { KEY.active, "active" } }
  for _, entry in ipairs(lists) do
    if redis.call("LREM", KEYS[entry[1]], 0, jobId) > 0 then prev = entry[2] break end
  end
end
local fields = redis.call("HMGET", jobKey, "parentKey", "parent", "deid")
if fields[3] then
  local dedupKey = ARGV[ARG.prefix] .. "de:" .. fields[3]
  if redis.call("GET", dedupKey) == jobId then redis.call("DEL", dedupKey) end
end
redis.call("DEL", jobKey, jobKey .. ":logs", jobKey .. ":dependencies", jobKey .. ":processed",
  jobKey .. ":failed", jobKey .. ":unsuccessful")
redis.call("XADD", KEYS[KEY.events], "*", "event", "removed", "jobId", jobId, "prev", prev)
local parentKey = fields[1]
if parentKey and redis.call("SREM", parentKey .. ":dependencies", jobKey) == 1 then
  -- The parent's prefix is its key without its id; the `parent` field names the queue key.
  local queueKey = string.match(fields[2] or "", '"queueKey":"([^"]*)"')
  if queueKey and redis.call("SCARD", parentKey .. ":dependencies") == 0 then
    releaseParent(queueKey .. ":", string.sub(parentKey, #queueKey + 2), parentKey, tonumber(ARGV[ARG.now]))
  end
end
return 1
