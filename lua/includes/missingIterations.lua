-- The job schedulers of a swept queue (`q.schedulers`, `q.prefix`): the next run still to come (ms, 0
-- for none), and those due within `lookback` ms whose iteration repeat:<id>:<millis> is missing, as
-- (id, millis, hash) triples. One read per queue, as ever; then one EXISTS per scheduler due.
local function missingIterations(q, now, lookback)
  local schedulers, nextSchedulerAt, missing = redis.call("ZRANGEBYSCORE", q.schedulers, now - lookback, "+inf",
    "WITHSCORES", "LIMIT", 0, 100), 0, {}
  for i = 1, #schedulers, 2 do
    local id, at = schedulers[i], schedulers[i + 1]
    if tonumber(at) > now then nextSchedulerAt = tonumber(at) break end
    if redis.call("EXISTS", q.prefix .. "repeat:" .. id .. ":" .. at) == 0 then
      table.insert(missing, id); table.insert(missing, at)
      table.insert(missing, redis.call("HGETALL", q.schedulers .. ":" .. id))
    end
  end
  return nextSchedulerAt, missing
end
