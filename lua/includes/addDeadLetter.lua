-- Adds a job that failed for good to its dead-letter queue (prefix job.deadLetter), as an add would:
-- its hash (name, data and opts built by the caller), `added`, LPUSH to wait, `waiting`, and the ready
-- marker. The id is deterministic: a dead letter that already exists is left alone and `duplicated` is
-- emitted, as for a custom id. The dead-letter queue's stream is capped with the caller's maxLen.
local function addDeadLetter(job, now, maxLen)
  local prefix, id = job.deadLetter, job.deadLetterId
  local events = prefix .. "events"
  if redis.call("EXISTS", prefix .. id) == 1 then
    redis.call("XADD", events, "MAXLEN", "~", maxLen, "*", "event", "duplicated", "jobId", id)
    return
  end
  redis.call("HSET", prefix .. id, "name", job.deadLetterName, "data", job.deadLetterData,
    "opts", job.deadLetterOpts, "timestamp", now, "delay", 0, "priority", 0)
  redis.call("XADD", events, "*", "event", "added", "jobId", id, "name", job.deadLetterName)
  redis.call("LPUSH", prefix .. "wait", id)
  redis.call("XADD", events, "MAXLEN", "~", maxLen, "*", "event", "waiting", "jobId", id)
  redis.call("ZADD", prefix .. "marker", 0, "0")
end
