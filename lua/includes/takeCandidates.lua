-- Takes up to `count` of the candidate ids (peeked by the previous call, or put back by this one), in
-- BullMQ's order, touching no other job: pops the right of wait and pushes back (in place) whatever
-- popped id is no candidate (a job added since, or a legacy "0:" marker, which is dropped); then the
-- candidates still in prioritized, lowest score first.
-- Peeked ids taken meanwhile by another worker are skipped. Pushes the taken ids onto active.
local function takeCandidates(q, count, candidates)
  local ids, peeked = {}, {}
  for _, id in ipairs(candidates) do peeked[id] = true end
  local popped = redis.call("RPOP", q.wait, count) or {}
  local back = {}
  for _, id in ipairs(popped) do
    if peeked[id] then
      ids[#ids + 1] = id
      peeked[id] = nil
    elseif string.sub(id, 1, 2) ~= "0:" then
      table.insert(back, 1, id)
    end
  end
  if #back > 0 then redis.call("RPUSH", q.wait, unpack(back)) end
  local rest = {}
  for _, id in ipairs(candidates) do
    if peeked[id] then
      rest[#rest + 1] = id
      peeked[id] = nil
    end
  end
  if #ids < count and #rest > 0 then
    local scores = redis.call("ZMSCORE", q.prioritized, unpack(rest))
    local found = {}
    for i, id in ipairs(rest) do
      if scores[i] then found[#found + 1] = { tonumber(scores[i]), id } end
    end
    table.sort(found, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
    local taken = {}
    for i = 1, math.min(#found, count - #ids) do taken[i] = found[i][2] end
    if #taken > 0 then
      redis.call("ZREM", q.prioritized, unpack(taken))
      for _, id in ipairs(taken) do ids[#ids + 1] = id end
    end
  end
  if #ids > 0 then redis.call("LPUSH", q.active, unpack(ids)) end
  return ids
end
