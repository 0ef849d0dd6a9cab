-- Read-only first pass of commitStagedJobs, so that a commit that cannot be whole writes nothing: the
-- staging has as many chunks as the caller staged and every staging list and set holds what the
-- record counted (a key that expired makes them disagree), the hashes still to persist exist, every
-- parent exists, and every existing job to link still exists without another live parent; a deferred
-- job naming no queue of the call or carrying a bad number is an error here, before any write. Returns
-- nil, the record's counts and the staged parents (flat: key, prefix, …), or the failure: {-30} (the
-- staging is gone or partial), {-5, parentKey} or {-7, index of the deferred job}.
-- @include isNumberText
local function checkStagedAdd(k, queues, chunks, tail, deferred)
  local flat = redis.call("HGETALL", k.stage)
  local counts = {}
  for i = 1, #flat, 2 do counts[flat[i]] = tonumber(flat[i + 1]) end
  local function holds(command, key, field)
    return redis.call(command, key) == (counts[field] or 0)
  end
  if counts.chunks ~= chunks or not holds("LLEN", k.stagedKeys, "keys")
      or not holds("LLEN", k.stagedCustomKeys, "customKeys") then
    return { -30 }
  end
  for g, q in ipairs(queues) do
    if not (holds("LLEN", q.stagedWait, g .. ":wait") and holds("LLEN", q.stagedLifo, g .. ":lifo")
        and holds("ZCARD", q.stagedPrioritized, g .. ":prioritized")
        and holds("ZCARD", q.stagedDelayed, g .. ":delayed")
        and holds("ZCARD", q.stagedWaitingChildren, g .. ":waiting-children")) then
      return { -30 }
    end
  end
  local parents = redis.call("HGETALL", k.parents)
  for i = 1, #parents, 2 do
    if redis.call("EXISTS", parents[i]) == 0 then return { -5, parents[i] } end
    if not holds("SCARD", k.stage .. ":deps:" .. parents[i], "deps:" .. parents[i]) then return { -30 } end
  end
  local present = 0
  for from = 1, #tail, 4000 do
    present = present + redis.call("EXISTS", unpack(tail, from, math.min(from + 3999, #tail)))
  end
  if present ~= #tail then return { -30 } end
  for i, job in ipairs(deferred) do
    if not queues[job.queue] then error("commitStagedJobs: deferred job " .. i .. " names no queue of the call") end
    for _, field in ipairs({ "timestamp", "delay", "priority", "dedupTtl" }) do
      if not isNumberText(job[field]) then error("commitStagedJobs: deferred job " .. i .. " has a bad " .. field) end
    end
    if job.kind == "attach" then
      local found = redis.call("HMGET", queues[job.queue].prefix .. job.id, "name", "parentKey")
      if not (found[1] or found[2]) then return { -30 } end
      if job.inBatch ~= "1" and found[2] and found[2] ~= job.parentKey
          and redis.call("EXISTS", found[2]) == 1 then
        return { -7, i }
      end
    end
  end
  return nil, counts, parents
end
