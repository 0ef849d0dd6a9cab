-- removeOnComplete / removeOnFail for jobs kept in a finished set: drops members older than `age`
-- seconds (at most `limit`), then all but the newest `count`, with their keys. Bounded per call.
-- @include removeJobKeys
local function pruneFinished(prefix, setKey, count, age, limit, now)
  local doomed = {}
  if age > 0 then
    doomed = redis.call("ZRANGEBYSCORE", setKey, 0, now - age * 1000, "LIMIT", 0, limit > 0 and limit or 1000)
  end
  if count > 0 then
    local extra = redis.call("ZRANGE", setKey, 0, -(count + 1))
    for i = 1, math.min(#extra, 1000) do doomed[#doomed + 1] = extra[i] end
  end
  for from = 1, #doomed, 4000 do
    redis.call("ZREM", setKey, unpack(doomed, from, math.min(from + 3999, #doomed)))
  end
  for _, id in ipairs(doomed) do removeJobKeys(prefix .. id) end
end
