-- True when a worker holds the job, or (with its children) any job still pending below it: such a
-- removal is refused, as BullMQ's isLocked.
local function isJobTreeLocked(jobKey, withChildren)
  if redis.call("EXISTS", jobKey .. ":lock") == 1 then return true end
  if not withChildren then return false end
  for _, childKey in ipairs(redis.call("SMEMBERS", jobKey .. ":dependencies")) do
    if isJobTreeLocked(childKey, true) then return true end
  end
  return false
end
