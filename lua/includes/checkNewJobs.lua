-- Read-only first pass over a batch, so that a rejected batch writes nothing: numbers each job
-- within its queue (for auto ids), marks custom ids that already exist, and returns {-5, i} when
-- job i's parent does not exist, {-7, i} when job i exists with another live parent, or {-31, i} when
-- job i's custom id is held by a staged add that has not committed (stageJobs). A job whose
-- queue index or numbers are bad is an error here, before the first write, not half-way.
-- @include isNumberText
local function checkNewJobs(jobs, queues)
  local seen = {}
  for i, job in ipairs(jobs) do
    local q = queues[job.queue]
    if not q then error("addJobs: job " .. i .. " names no queue of the call") end
    for _, field in ipairs({ "timestamp", "delay", "priority", "dedupTtl" }) do
      if not isNumberText(job[field]) then error("addJobs: job " .. i .. " has a bad " .. field) end
    end
    q.counts = q.counts + 1
    job.seq = q.counts
    if job.customId ~= "" then
      local key = q.prefix .. job.customId
      if seen[key] then
        job.exists = true
      elseif job.generatedId == "1" then
        seen[key] = true
      else
        local found = redis.call("HMGET", key, "name", "parentKey")
        if found[1] or found[2] then
          -- Only a staged add's hash carries a TTL: its job is not added until that add commits.
          if redis.call("PTTL", key) > 0 then return { -31, i } end
          job.exists = true
          if job.parentKey ~= "" and found[2] and found[2] ~= job.parentKey
              and redis.call("EXISTS", found[2]) == 1 then
            return { -7, i }
          end
        end
        seen[key] = true
      end
    end
    if job.parentKey ~= "" and not seen[job.parentKey] and redis.call("EXISTS", job.parentKey) == 0 then
      return { -5, i }
    end
  end
  return nil
end
