-- BullMQ's stalled check (moveStalledJobsToWait) for one queue `q` (a table of its keys and prefix):
-- at most once per stalledInterval (the stalled-check key), every job of the last snapshot whose
-- lock is gone goes back to the front of wait with stc + 1 (and `defa` past maxStalledCount,
-- unless it is a job scheduler's iteration; a lost handoff goes back uncounted); then all active
-- jobs form the next snapshot. A grouped job goes back to the front of its group and frees its slot.
-- Returns the moved ids, or nil when the check ran within the interval.
-- @include eventsMaxLen
-- @include isQueuePausedOrMaxed
-- @include pushGroupJobs
-- @include releaseGroupSlots
local function checkStalledJobs(q, now, stalledInterval, maxStalledCount)
  if redis.call("SET", q.stalledCheck, now, "PX", stalledInterval, "NX") == false then return nil end
  local maxLen = eventsMaxLen(q.meta)
  redis.call("XTRIM", q.events, "MAXLEN", "~", maxLen)
  local candidates = redis.call("SMEMBERS", q.stalled)
  if #candidates > 0 then redis.call("DEL", q.stalled) end
  local moved, grouped, slots = {}, {}, {}
  for _, id in ipairs(candidates) do
    local jobKey = q.prefix .. id
    if string.sub(id, 1, 2) == "0:" then
      redis.call("LREM", q.active, 1, id)
    elseif redis.call("EXISTS", jobKey .. ":lock") == 0 and redis.call("LREM", q.active, 1, id) > 0 then
      -- Read and set rather than HINCRBY, which would fail on a stc that is no integer after the LREM.
      local fields = redis.call("HMGET", jobKey, "stc", "rjk", "nq:ho", "processedOn", "gid", "priority")
      -- A lease handed over by handOffJob (nq:ho = its processedOn; a later lease writes its own)
      -- whose invocation never came (lost, throttled, late): the job never started, so no stall is
      -- counted and the attempt it was leased for is undone.
      local lostHandoff = fields[3] ~= false and fields[3] == fields[4]
      if lostHandoff then
        redis.call("HDEL", jobKey, "nq:ho", "ats", "processedOn")
      else
        local stalls = (tonumber(fields[1]) or 0) + 1
        redis.call("HSET", jobKey, "stc", stalls)
        local schedulerId = fields[2]
        local isIteration = schedulerId and (redis.call("EXISTS", q.prefix .. "repeat:" .. schedulerId) == 1
          or redis.call("ZSCORE", q.schedulers, schedulerId) ~= false)
        if stalls > maxStalledCount and not isIteration then
          redis.call("HSET", jobKey, "defa", "job stalled more than allowable limit")
        end
      end
      if fields[5] then
        grouped[#grouped + 1] = { gid = fields[5], id = id, priority = fields[6], front = true }
        slots[fields[5]] = (slots[fields[5]] or 0) + 1
      else
        redis.call("RPUSH", q.wait, id)
      end
      redis.call("XADD", q.events, "*", "event", "waiting", "jobId", id, "prev", "active")
      if not lostHandoff then redis.call("XADD", q.events, "*", "event", "stalled", "jobId", id) end
      moved[#moved + 1] = id
    end
  end
  releaseGroupSlots(q.prefix, slots, 0)
  pushGroupJobs(q.prefix, q.meta, grouped)
  if #moved > #grouped and not isQueuePausedOrMaxed(q.meta, q.active) then redis.call("ZADD", q.marker, 0, "0") end
  local active = redis.call("LRANGE", q.active, 0, -1)
  for from = 1, #active, 4000 do
    redis.call("SADD", q.stalled, unpack(active, from, math.min(from + 3999, #active)))
  end
  return moved
end
