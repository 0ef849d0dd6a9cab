-- Reads a worker call's acked entries (ARGV group `jobs`, with the defaults of the fields `extra`
-- leaves out) and checks, before the call writes anything, every field the ack turns into a number or
-- a decision: Redis never rolls a script back, so an entry found bad half-way would leave the jobs
-- acked before it finished and the rest in no state. At most 2000 entries (the worker holds at most
-- 1000 jobs), so every unpack of the ack stays under Lua's limit. A dead letter aimed outside the
-- queue's Redis Cluster hash tag is dropped, as core/dead-letter/dead-letter.ts drops it: on a cluster, writing it
-- would stop the script after the job left active.
-- @include decodeIds
-- @include hashTagOf
-- @include isNumberText
local function readAckEntries(prefix)
  if ARG_GROUP_COUNT > 2000 then error("worker call: at most 2000 acked entries per call") end
  local outcomes = { completed = true, failed = true, delayed = true, waiting = true, returned = true }
  local tag, jobs = hashTagOf(prefix), {}
  for i = 1, ARG_GROUP_COUNT do
    local job = { id = groupArg(i, ARG_GROUP.id), token = groupArg(i, ARG_GROUP.token),
      outcome = groupArg(i, ARG_GROUP.outcome), value = groupArg(i, ARG_GROUP.value),
      attemptsMade = groupArg(i, ARG_GROUP.attemptsMade), stacktrace = "", due = "0", priority = "0", lifo = "",
      keepCount = "-1", keepAge = "0", keepLimit = "0", attempts = "0", parentKey = "", parentPrefix = "",
      parentPolicy = "", dedupId = "", deferred = "", deadLetter = "", group = "" }
    local extra = groupArg(i, ARG_GROUP.extra)
    if extra ~= "" then
      local fields = decodeIds(extra)
      for k = 1, #fields, 2 do job[fields[k]] = fields[k + 1] or "" end
    end
    local bad = not outcomes[job.outcome] and "outcome"
      or (job.attemptsMade ~= "" or job.outcome == "failed") and not isNumberText(job.attemptsMade) and "attemptsMade"
    for _, field in ipairs({ "due", "priority", "keepCount", "keepAge", "keepLimit", "attempts" }) do
      if not bad and not isNumberText(job[field]) then bad = field end
    end
    if bad then error("worker call: acked entry " .. i .. " has a bad " .. bad) end
    if job.deadLetter ~= "" and tag and hashTagOf(job.deadLetter) ~= tag then job.deadLetter = "" end
    jobs[i] = job
  end
  return jobs
end
