-- BullMQ refuses to complete a job that still has pending children (-4) or a failed one (-9), and
-- leaves it active and locked: the worker then fails it. Returns index → code for the batch's
-- completions that hold their lock and are refused. One EXISTS over the batch finds the (rare)
-- parents; empty sets do not exist.
-- @include holdsLock
local function refusedCompletions(prefix, jobs, locks)
  local refused, keys = {}, {}
  for i, job in ipairs(jobs) do
    if job.outcome == "completed" and holdsLock(locks[i], job.token) then
      keys[#keys + 1] = prefix .. job.id .. ":dependencies"
      keys[#keys + 1] = prefix .. job.id .. ":unsuccessful"
    end
  end
  if #keys == 0 or redis.call("EXISTS", unpack(keys)) == 0 then return refused end
  for i, job in ipairs(jobs) do
    if job.outcome == "completed" and holdsLock(locks[i], job.token) then
      if redis.call("EXISTS", prefix .. job.id .. ":dependencies") == 1 then
        refused[i] = -4
      elseif redis.call("EXISTS", prefix .. job.id .. ":unsuccessful") == 1 then
        refused[i] = -9
      end
    end
  end
  return refused
end
