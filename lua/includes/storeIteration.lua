-- Stores one job scheduler iteration, job id `repeat:<schedulerId>:<millis>`, as BullMQ does: `rjk` =
-- the scheduler id, timestamp = now, delayed until `millis` or ready at once (by priority, lifo or
-- not). Its opts JSON comes from the caller without its closing brace; the parts that depend on
-- `millis` — jobId and delay — are appended here (13-digit numbers print exactly). A grouped template
-- (`group` not "") makes grouped iterations. The caller flushes the queue `q`. Returns the delay.
-- @include storeJob
local function storeIteration(q, schedulerId, idJson, millis, now, optsHead, name, data, priority, lifo, group)
  local delay = math.max(millis - now, 0)
  local placement = "wait"
  if delay > 0 then
    placement = "delayed"
  elseif tonumber(priority) > 0 then
    placement = "prioritized"
  elseif lifo == "1" then
    placement = "lifo"
  end
  local opts = optsHead .. ',"jobId":"repeat:' .. idJson .. ":" .. millis .. '","delay":' .. delay .. "}"
  storeJob(q, { name = name, data = data, opts = opts, timestamp = now, delay = delay, priority = priority,
    parentKey = "", repeatJobKey = schedulerId, dedupId = "", placement = placement, group = group },
    "repeat:" .. schedulerId .. ":" .. millis, now)
  return delay
end
