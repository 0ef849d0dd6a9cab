-- Deduplication for a job about to be created as `jobId` (BullMQ's `de` option), following BullMQ 6.7's
-- deduplicateJob. Returns the id the add resolves to and whether the job must still be created:
--   simple / ttl mode: SET NX claims the window; a live owner wins (`deduplicated` event);
--   ttl + extend: a live owner wins and its window restarts;
--   replace mode: an owner still in `delayed` is removed (`removed`, then `deduplicated` naming the
--     new job) and the new job takes the window; any other live owner wins silently;
--   a window without TTL whose owner hash is gone is stale and taken over.
-- A nil `eventsKey` (the queue writes no add events) writes no event.
-- @include removeJobKeys
local function deduplicateJob(prefix, eventsKey, maxLen, dedupId, jobId, ttl, extend, replace)
  local dedupKey = prefix .. "de:" .. dedupId
  local function claim(owner)
    if ttl > 0 then
      redis.call("SET", dedupKey, owner, "PX", ttl)
    else
      redis.call("SET", dedupKey, owner)
    end
  end
  local owner
  if replace or (ttl > 0 and extend) then
    owner = redis.call("GET", dedupKey)
  else
    local claimed
    if ttl > 0 then
      claimed = redis.call("SET", dedupKey, jobId, "PX", ttl, "NX")
    else
      claimed = redis.call("SET", dedupKey, jobId, "NX")
    end
    if claimed then return jobId, true end
    owner = redis.call("GET", dedupKey)
  end
  if not owner then
    claim(jobId)
    return jobId, true
  end
  -- A delayed owner is replaced, in BullMQ's delayed set or (grouped) in nimbusq's.
  if replace and (redis.call("ZREM", prefix .. "delayed", owner) > 0 or redis.call("ZREM", prefix .. "nq:gdelayed", owner) > 0) then
    removeJobKeys(prefix .. owner)
    if eventsKey then
      redis.call("XADD", eventsKey, "*", "event", "removed", "jobId", owner, "prev", "delayed")
      redis.call("XADD", eventsKey, "MAXLEN", "~", maxLen, "*", "event", "deduplicated", "jobId", jobId,
        "deduplicationId", dedupId, "deduplicatedJobId", owner)
    end
    redis.call("DEL", prefix .. "dn:" .. dedupId)
    if ttl > 0 and not extend then
      redis.call("SET", dedupKey, jobId, "KEEPTTL")
    else
      claim(jobId)
    end
    return jobId, true
  end
  if redis.call("PTTL", dedupKey) == -1 and redis.call("EXISTS", prefix .. owner) == 0 then
    redis.call("DEL", prefix .. "dn:" .. dedupId)
    claim(jobId)
    return jobId, true
  end
  if replace then return owner, false end
  if ttl > 0 and extend then claim(owner) end
  if eventsKey then
    redis.call("XADD", eventsKey, "MAXLEN", "~", maxLen, "*", "event", "deduplicated", "jobId", owner,
      "deduplicationId", dedupId, "deduplicatedJobId", jobId)
  end
  return owner, false
end
