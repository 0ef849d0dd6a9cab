-- Makes grouped jobs ready: each `item` {gid, id, priority, lifo, front} joins its group's ZSET and
-- its group joins the round-robin ring at the back when not in it. One INCRBY for the batch's turns,
-- one ZADD per group, one ZADD for the ring; the queue's meta learns `nq:groups` (read by the
-- worker's lease) when a group joined the ring. Paused groups join too: the lease skips them.
-- @include groupKeys
local function pushGroupJobs(prefix, metaKey, items)
  if #items == 0 then return end
  local g = groupKeys(prefix)
  local last = redis.call("INCRBY", g.counter, #items)
  local members, order, turns = {}, {}, {}
  for i, item in ipairs(items) do
    local turn = last - #items + i
    local offset = item.front and 0 or (item.lifo and 2147483648 - turn % 2147483648 or 2147483648 + turn % 2147483648)
    if not members[item.gid] then
      members[item.gid] = {}
      order[#order + 1] = item.gid
      turns[#turns + 1] = turn
      turns[#turns + 1] = item.gid
    end
    local list = members[item.gid]
    list[#list + 1] = (tonumber(item.priority) or 0) * 4294967296 + offset
    list[#list + 1] = item.id
  end
  for _, gid in ipairs(order) do
    local list = members[gid]
    for from = 1, #list, 4000 do
      redis.call("ZADD", g.jobs .. gid, unpack(list, from, math.min(from + 3999, #list)))
    end
  end
  local joined = 0
  for from = 1, #turns, 4000 do
    joined = joined + redis.call("ZADD", g.ring, "NX", unpack(turns, from, math.min(from + 3999, #turns)))
  end
  if joined > 0 then redis.call("HSET", metaKey, "nq:groups", 1) end
end
