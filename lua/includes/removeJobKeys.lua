-- Deletes a job's hash and the keys that hang off it (its lock simply expires, as in BullMQ).
local function removeJobKeys(jobKey)
  redis.call("DEL", jobKey, jobKey .. ":logs", jobKey .. ":dependencies", jobKey .. ":processed",
    jobKey .. ":failed", jobKey .. ":unsuccessful")
end
