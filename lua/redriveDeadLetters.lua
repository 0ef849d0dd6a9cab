--[[
redriveDeadLetters: Moves dead letters back to their source queue in one atomic call: each letter still
in the structure it was read from leaves the dead-letter queue (its keys deleted, `removed`) and becomes
a new job of the source queue, stored as an add stores it (next counter id, wait / lifo / prioritized,
`added`, `waiting`, marker). A letter no longer there (taken, removed, or moved by another call) is
skipped. A letter whose failed job was retried since (it exists in the source queue, not failed) is
dropped instead: redriving it too would run the job twice. Safe to replay: a replayed call returns the
first call's answer and writes nothing.

KEYS
  replayGuard  nimbusq's replay guard for this call, <prefix>:nq-req:<queue>:<token> of the source queue
  idCounter  the source queue's {P}id
  wait  {P}wait
  prioritized  {P}prioritized
  priorityCounter  {P}pc
  delayed  {P}delayed
  marker  {P}marker
  events  {P}events
  waitingChildren  {P}waiting-children
  structure  the dead-letter queue's {P}wait, {P}failed or {P}completed, where the letters were read
  deadLetterEvents  the dead-letter queue's {P}events
  attention  <prefix>:nq:due, the sweeper's attention index: the queue is noted for its next pass
ARGV
  prefix  string  the source queue's key prefix {P}
  deadLetterPrefix  string  the dead-letter queue's key prefix
  state  "wait"|"failed"|"completed"  the structure's state name (the `removed` event's prev)
  now  int  the caller's clock (ms), the new jobs' timestamp
  guardTtl  int  how long the replay guard lives (ms)
  maxLenEvents  int  both streams' approximate cap (MAXLEN ~)
ARGV repeated letters
  deadLetterId  string  the dead letter's id
  sourceJobId  string  the id of the failed job it was made from, in the source queue
  name  string  the new job's name
  data  string  its data JSON
  opts  string  its opts JSON, BullMQ's short keys
  priority  int  its priority, 0 for none
  placement  "wait"|"lifo"|"prioritized"  where the new job goes
  group  string  its group id (opts.group.id), "" for none: a grouped job goes back to its group
REPLY
  ids  string  one entry per letter, separated by ",": the new job's id, "" when the letter was
    skipped, "-" when it was dropped (its job was retried since)
EVENTS
  removed {jobId, prev} on the dead-letter queue; added, waiting on the source queue.
GLOBAL LOCK
  It moves letters it reads back to the source queue their hashes name, into that queue's keys.
]]
-- @include noteAttention
-- @include loadQueueMeta
-- @include storeJob
-- @include flushQueue
-- @include removeJobKeys
-- @include checkIntegerArgs
-- @include isNumberText
-- Letters leave the dead-letter queue before their jobs are stored: every number is checked first.
checkIntegerArgs("redriveDeadLetters", { "now", "guardTtl", "maxLenEvents" })
for i = 1, ARG_GROUP_COUNT do
  if not isNumberText(groupArg(i, ARG_GROUP.priority)) then error("redriveDeadLetters: letter " .. i .. " has a bad priority") end
end
-- Redis 6.2 form (no NX with GET): the GET runs only for a replay.
if not redis.call("SET", KEYS[KEY.replayGuard], "", "NX", "PX", ARGV[ARG.guardTtl]) then
  return redis.call("GET", KEYS[KEY.replayGuard])
end
local state, structure, prefix = ARGV[ARG.state], KEYS[KEY.structure], ARGV[ARG.prefix]
local moved, ids = {}, {}
for i = 1, ARG_GROUP_COUNT do
  local id, source = groupArg(i, ARG_GROUP.deadLetterId), groupArg(i, ARG_GROUP.sourceJobId)
  local gone
  ids[i] = ""
  -- Letters are read oldest first, from the tail of wait: search from there.
  if state == "wait" then gone = redis.call("LREM", structure, -1, id) else gone = redis.call("ZREM", structure, id) end
  local retried = gone > 0 and not redis.call("ZSCORE", prefix .. "failed", source)
    and redis.call("EXISTS", prefix .. source) == 1
  if retried then
    removeJobKeys(ARGV[ARG.deadLetterPrefix] .. id)
    redis.call("XADD", KEYS[KEY.deadLetterEvents], "*", "event", "removed", "jobId", id, "prev", state)
    ids[i] = "-"
  elseif gone > 0 then moved[#moved + 1] = i end
end
if #moved > 0 then
  local q = { prefix = ARGV[ARG.prefix] }
  for name, index in pairs(KEY) do q[name] = KEYS[index] end
  loadQueueMeta(q, ARGV[ARG.maxLenEvents])
  local now, dlPrefix = tonumber(ARGV[ARG.now]), ARGV[ARG.deadLetterPrefix]
  local first = redis.call("INCRBY", KEYS[KEY.idCounter], #moved) - #moved
  for n, i in ipairs(moved) do
    local job = { name = groupArg(i, ARG_GROUP.name), data = groupArg(i, ARG_GROUP.data),
      opts = groupArg(i, ARG_GROUP.opts), timestamp = now, delay = 0, priority = groupArg(i, ARG_GROUP.priority),
      placement = groupArg(i, ARG_GROUP.placement), parentKey = "", repeatJobKey = "", dedupId = "",
      group = groupArg(i, ARG_GROUP.group) }
    local id, letter = string.format("%d", first + n), groupArg(i, ARG_GROUP.deadLetterId)
    storeJob(q, job, id, now)
    removeJobKeys(dlPrefix .. letter)
    redis.call("XADD", KEYS[KEY.deadLetterEvents], "MAXLEN", "~", q.maxLen, "*", "event", "removed", "jobId", letter,
      "prev", state)
    ids[i] = id
  end
  flushQueue(q)
end
local answer = table.concat(ids, ",")
redis.call("SET", KEYS[KEY.replayGuard], answer, "XX", "KEEPTTL")
noteAttention(KEYS[KEY.attention], ARGV[ARG.prefix], 0)
return answer
