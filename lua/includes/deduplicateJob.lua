-- Deduplication for a job about to be created as `jobId` (BullMQ's `de` option). Returns the id the
-- add resolves to and whether the job must still be created:
--   simple / ttl mode: SET NX claims the window; a live owner wins (its TTL reset with `extend`);
--   replace mode: an owner still in `delayed` is removed and the new job takes its place;
--   a key without TTL whose owner hash is gone is stale and taken over.
local function deduplicateJob(prefix, eventsKey, maxLen, dedupId, jobId, ttl, extend, replace)
  local dedupKey = prefix .. "de:" .. dedupId
  if not replace then
    local claimed
    if ttl > 0 then
      claimed = redis.call("SET", dedupKey, jobId, "PX", ttl, "NX")
    else
      claimed = redis.call("SET", dedupKey, jobId, "NX")
    end
    if claimed then return jobId, true end
  end
  local owner = redis.call("GET", dedupKey)
  if owner and replace and redis.call("ZSCORE", prefix .. "delayed", owner) then
    redis.call("ZREM", prefix .. "delayed", owner)
    redis.call("DEL", prefix .. owner, prefix .. owner .. ":logs")
    redis.call("XADD", eventsKey, "*", "event", "removed", "jobId", owner, "prev", "delayed")
    redis.call("XADD", eventsKey, "MAXLEN", "~", maxLen, "*", "event", "deduplicated", "jobId", jobId,
      "deduplicationId", dedupId, "deduplicatedJobId", owner)
    if ttl > 0 and extend then
      redis.call("SET", dedupKey, jobId, "PX", ttl)
    else
      redis.call("SET", dedupKey, jobId, "KEEPTTL")
    end
    return jobId, true
  end
  if owner and not (redis.call("PTTL", dedupKey) == -1 and redis.call("EXISTS", prefix .. owner) == 0) then
    if ttl > 0 and extend then redis.call("PEXPIRE", dedupKey, ttl) end
    redis.call("XADD", eventsKey, "MAXLEN", "~", maxLen, "*", "event", "deduplicated", "jobId", owner,
      "deduplicationId", dedupId, "deduplicatedJobId", jobId)
    return owner, false
  end
  if ttl > 0 then
    redis.call("SET", dedupKey, jobId, "PX", ttl)
  else
    redis.call("SET", dedupKey, jobId)
  end
  return jobId, true
end
