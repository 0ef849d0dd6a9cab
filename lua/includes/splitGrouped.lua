-- Sorts the ids of a staged add's list (`scored`: score, id pairs) into the jobs BullMQ's structures
-- take and the grouped ones (their hash has a gid), which it queues in `out.ready` ({gid, id, priority,
-- lifo} for pushGroupJobs) or, from a delayed list, in `out.delayed` (score, id pairs for nq:gdelayed).
-- One HMGET per job: only a commit whose add staged grouped jobs calls it. Returns the kept list.
-- @include pushGroupJobs
local function splitGrouped(prefix, list, scored, lifo, delayed, out)
  local kept, step = {}, scored and 2 or 1
  for i = 1, #list, step do
    local id = scored and list[i + 1] or list[i]
    local fields = redis.call("HMGET", prefix .. id, "gid", "priority")
    if not fields[1] then
      kept[#kept + 1] = list[i]
      if scored then kept[#kept + 1] = id end
    elseif delayed then
      out.delayed[#out.delayed + 1] = list[i]
      out.delayed[#out.delayed + 1] = id
    else
      out.ready[#out.ready + 1] = { gid = fields[1], id = id, priority = fields[2], lifo = lifo }
    end
  end
  return kept
end

-- Sorts one queue's lists of a staged add in place (`lists`: wait, lifo, prioritized and delayed, the
-- last two as score, id pairs): its grouped jobs leave them for their groups or nq:gdelayed.
local function sortOutGrouped(prefix, lists)
  local out = { ready = {}, delayed = {} }
  lists.wait = splitGrouped(prefix, lists.wait, false, false, false, out)
  lists.lifo = splitGrouped(prefix, lists.lifo, false, true, false, out)
  lists.prioritized = splitGrouped(prefix, lists.prioritized, true, false, false, out)
  lists.delayed = splitGrouped(prefix, lists.delayed, true, false, true, out)
  pushGroupJobs(prefix, prefix .. "meta", out.ready)
  for from = 1, #out.delayed, 4000 do
    redis.call("ZADD", prefix .. "nq:gdelayed", unpack(out.delayed, from, math.min(from + 3999, #out.delayed)))
  end
  if #out.delayed > 0 then redis.call("HSET", prefix .. "meta", "nq:groups", 1) end
end
