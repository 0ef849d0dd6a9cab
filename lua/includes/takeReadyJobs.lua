-- Takes up to `count` job ids in BullMQ's order — from the right of wait (dropping legacy "0:"
-- marker ids), then the lowest scores of prioritized — and pushes them onto active, as the
-- equivalent RPOPLPUSH / ZPOPMIN + LPUSH sequence would. (BullMQ also deletes {P}pc when prioritized
-- runs empty; the counter only orders jobs of one priority, so nimbusq leaves it.)
local function takeReadyJobs(waitKey, prioritizedKey, activeKey, count)
  local ids = {}
  local popped = redis.call("RPOP", waitKey, count)
  if popped then
    for _, id in ipairs(popped) do
      if string.sub(id, 1, 2) ~= "0:" then ids[#ids + 1] = id end
    end
  end
  if #ids < count then
    local wanted = count - #ids
    local lowest = redis.call("ZPOPMIN", prioritizedKey, wanted)
    for i = 1, #lowest, 2 do ids[#ids + 1] = lowest[i] end
  end
  for from = 1, #ids, 4000 do
    redis.call("LPUSH", activeKey, unpack(ids, from, math.min(from + 3999, #ids)))
  end
  return ids
end
