-- The next `count` job ids a lease would take, in order (the right of wait first, then the lowest
-- prioritized scores), read without taking them: the worker declares their keys in its next call.
local function peekReady(q, count)
  local ids = {}
  if count <= 0 then return ids end
  local tail = redis.call("LRANGE", q.wait, -count, -1)
  for i = #tail, 1, -1 do
    if string.sub(tail[i], 1, 2) ~= "0:" then ids[#ids + 1] = tail[i] end
  end
  if #ids < count then
    local lowest = redis.call("ZRANGE", q.prioritized, 0, count - #ids - 1)
    for _, id in ipairs(lowest) do ids[#ids + 1] = id end
  end
  return ids
end
