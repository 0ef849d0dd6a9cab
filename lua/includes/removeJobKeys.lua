-- Deletes a job's hash and the keys that hang off it (its lock simply expires, as in BullMQ);
-- returns how many existed.
local function removeJobKeys(jobKey)
  return redis.call("DEL", jobKey, jobKey .. ":logs", jobKey .. ":dependencies", jobKey .. ":processed",
    jobKey .. ":failed", jobKey .. ":unsuccessful")
end
