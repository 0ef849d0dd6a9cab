--[[
cleanJobs: One bounded step of Queue.clean (and of Queue.drain): reads up to `take` entries of one
structure, oldest first, past the `offset` entries earlier steps kept, and looks at them until it has
done `budget` units of work (an entry kept 1, a job deleted 3, more with a parent or a deduplication
window: each unit a command or two), so a step's time follows the work done; it deletes the jobs finished,
last processed or created at or before `cutoff` (drain: all of them) the bulk way — unlinked hard
from their parents, dedup windows ended, keys deleted —, except a job scheduler's current iteration
and, in active, jobs a worker holds. Safe to replay: a replayed step returns its first answer.
In a list, taking deleted entries out walks it from the nearer end to them (LREM, ~120 entries a unit):
a step deleting far from both ends stops when its work and that walk reach `cap` (after 30 units).

KEYS
  source  the structure: {P}wait, paused, active, delayed, prioritized, completed or failed
  schedulers  {P}repeat
  events  {P}events
  replayGuard  nimbusq's replay guard for this step
ARGV
  prefix  string  the queue key prefix {P}
  state  "wait"|"paused"|"active"|"delayed"|"prioritized"|"completed"|"failed"  the structure cleaned
  cutoff  int?  the latest time (ms) a deleted job may have; "" to delete whatever the time (drain)
  offset  int  entries earlier steps looked at and kept, skipped from the oldest end
  take  int  most entries this step reads
  budget  int  units of work after which the step stops
  cap  int  units a step that deletes may spend, a list's walk included
  limit  int  most jobs this step deletes, 0 for no limit but `take`
  total  int  jobs earlier steps of this clean deleted
  emit  flag  "1" to write `cleaned {count}` when this step finishes the clean
  listIds  flag  "1" to answer the deleted ids, "" for their number only
  guardTtl  int  how long the replay guard lives (ms)
REPLY
  finished  int  1 when nothing older is left to look at or `limit` was reached (0 when the budget ran
    out first)
  kept  int  the entries looked at and left in place
  deleted  int  how many jobs went
  ids  string...  their ids, when asked
EVENTS
  cleaned {count: total + deleted} once, from the step finishing a clean (emit "1").
GLOBAL LOCK  It deletes the jobs it finds in the structure it walks, with their sub-keys.
]]
-- @include replayedResult
-- @include saveResult
-- @include isSchedulerIteration
-- @include deleteJob
-- @include releaseGroupSlots
-- @include checkIntegerArgs
checkIntegerArgs("cleanJobs", { "offset", "take", "budget", "cap", "limit", "total", "guardTtl" })
local replayed = replayedResult(KEYS[KEY.replayGuard])
if replayed then return replayed end
local source, prefix, state = KEYS[KEY.source], ARGV[ARG.prefix], ARGV[ARG.state]
local cutoff, budget = tonumber(ARGV[ARG.cutoff]), tonumber(ARGV[ARG.budget])
local offset, take, limit = tonumber(ARGV[ARG.offset]), tonumber(ARGV[ARG.take]), tonumber(ARGV[ARG.limit])
local finishedSet, isList = state == "completed" or state == "failed", state == "wait" or state == "paused" or state == "active"
local entries
if finishedSet then
  entries = redis.call("ZRANGEBYSCORE", source, 0, ARGV[ARG.cutoff], "LIMIT", 0, take)
elseif isList then
  entries = redis.call("LRANGE", source, -(offset + take), -(offset + 1))
else
  entries = redis.call("ZRANGE", source, offset, offset + take - 1)
end
-- The time BullMQ compares: finishedOn, else processedOn, else timestamp (lists); processedOn, else
-- timestamp (delayed); timestamp (prioritized). Finished sets are ranged by their score instead.
local firstTimeField = isList and 5 or (state == "delayed" and 6 or 7)
local deleted, kept, work, looked = {}, 0, 0, 0
local function dueFields(id) -- the fields of a job to delete; nil for a job kept
  local f = redis.call("HMGET", prefix .. id, "rjk", "parentKey", "parent", "deid", "finishedOn", "processedOn",
    "timestamp", "gid")
  if not finishedSet then
    if isSchedulerIteration(id, f[1], KEYS[KEY.schedulers]) then return nil end
    if state == "active" and redis.call("EXISTS", prefix .. id .. ":lock") == 1 then return nil end
    if cutoff then
      for i = firstTimeField, 7 do
        if f[i] then
          if (tonumber(f[i]) or 0) > cutoff then return nil end
          break
        end
      end
    end
  end
  return f
end
local n = #entries
-- Work a deleting step may do besides the LREM walk to its window (from the nearer end).
local deleting = tonumber(ARGV[ARG.cap])
if isList then
  local walk = math.min(offset + n, redis.call("LLEN", source) - offset)
  deleting = math.max(30, deleting - math.floor(walk / 120))
end
for step = 1, n do
  if (limit > 0 and #deleted >= limit) or work >= budget or (#deleted > 0 and work >= deleting) then break end
  -- A list's oldest entries are at its right end.
  local i = isList and n - step + 1 or step
  local f = dueFields(entries[i])
  -- A job to delete that would take the step past its room waits for the next step.
  if f and work >= deleting then break end
  looked = step
  if not f then
    kept = kept + 1
    work = work + 1
  else
    deleteJob(prefix, entries[i], f[2], f[3], f[4])
    if state == "active" and f[8] then releaseGroupSlots(prefix, { [f[8]] = 1 }) end
    deleted[#deleted + 1] = entries[i]
    work = work + 3 + (f[2] and 4 or 0) + (f[4] and 2 or 0)
    -- Marked now, dropped below in one LREM, so the indexes of the entries still to look at hold.
    if isList then redis.call("LSET", source, -(offset + n - i + 1), "") end
  end
end
if #deleted > 0 then
  if isList then
    -- LREM reads the list entry by entry from the end it starts at to the last marker it takes out
    -- (~0.1 µs an entry: 90 ms for 900,000 kept entries): start at the end nearer the window.
    local fromHead = redis.call("LLEN", source) - offset
    redis.call("LREM", source, offset + n <= fromHead and -#deleted or #deleted, "")
  else
    for from = 1, #deleted, 4000 do
      redis.call("ZREM", source, unpack(deleted, from, math.min(from + 3999, #deleted)))
    end
  end
end
local finished = (limit > 0 and #deleted >= limit) or (looked == n and n < take)
if finished and ARGV[ARG.emit] == "1" then
  redis.call("XADD", KEYS[KEY.events], "*", "event", "cleaned", "count", tonumber(ARGV[ARG.total]) + #deleted)
end
local result = { finished and 1 or 0, kept, #deleted }
if ARGV[ARG.listIds] == "1" then
  for _, id in ipairs(deleted) do result[#result + 1] = id end
end
return saveResult(KEYS[KEY.replayGuard], result, ARGV[ARG.guardTtl])
