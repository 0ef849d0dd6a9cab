-- Sets a swept queue's entry in the attention index (`indexKey`, member `name`) to the earliest of
-- `times` (ms; 0 for none: its next delayed job, stalled check, scheduler run, recheck of jobs
-- waiting, now for events still to forward), or takes it out when there is none: the queue then
-- costs the sweeper nothing until a script notes it again.
local function settleAttention(indexKey, name, times)
  local at = false
  for _, t in ipairs(times) do
    if t > 0 and (not at or t < at) then at = t end
  end
  if at then redis.call("ZADD", indexKey, at, name) else redis.call("ZREM", indexKey, name) end
end
