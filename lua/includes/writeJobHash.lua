-- Writes a new job's hash with BullMQ's fields (name, data, opts, timestamp, delay, priority, and
-- parentKey/parent, rjk, deid and nimbusq's gid when the job has them); returns its key.
local function writeJobHash(q, job, id)
  local key = q.prefix .. id
  local fields = { "name", job.name, "data", job.data, "opts", job.opts, "timestamp", job.timestamp,
    "delay", job.delay, "priority", job.priority }
  if job.parentKey ~= "" then
    table.insert(fields, "parentKey"); table.insert(fields, job.parentKey)
    table.insert(fields, "parent"); table.insert(fields, job.parentField)
  end
  if job.repeatJobKey ~= "" then table.insert(fields, "rjk"); table.insert(fields, job.repeatJobKey) end
  if (job.group or "") ~= "" then table.insert(fields, "gid"); table.insert(fields, job.group) end
  if job.dedupId ~= "" then table.insert(fields, "deid"); table.insert(fields, job.dedupId) end
  redis.call("HSET", key, unpack(fields))
  return key
end
