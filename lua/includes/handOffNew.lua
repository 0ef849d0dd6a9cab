-- The part of handOffJob and handOffJobDeclared once the job's id and hash key are known (`custom`:
-- the id was given, so it may exist; `last`: the last id of the block reserved by this call, or 0; a
-- reserved id's block must carry the queue's current id epoch, `expectedEpoch`, else it predates an
-- obliterate and is refused; a reserving call starts the epoch when meta has none): a custom id that exists is a duplicate (or held by a staged add);
-- otherwise the job is written and, when a worker may take it now, handed over — see handOffJob's
-- header. The replay guard is the call's first write and holds its reply: a replay of the call finds it
-- and answers the first run's reply, writing nothing (one SET on the normal path, no GET before it).
-- @include noteAttention
-- A replayed call's reply, from its guard's text.
local function replayedHandOff(text)
  local id, outcome, handed, running, lease, last, epoch =
    string.match(text, "^(.*)|(%d)|(%d)|(%d+)|(%d+)|(%d+)|([^|]*)$")
  return { id, tonumber(outcome), tonumber(handed), tonumber(running), tonumber(lease), tonumber(last), epoch }
end

local function handOffNew(id, key, custom, last, expectedEpoch)
  local now = tonumber(ARGV[ARG.now])
  local prefix = string.sub(KEYS[KEY.idCounter], 1, -3)
  local level = tonumber(ARGV[ARG.events])
  local events, maxLen = KEYS[KEY.events], ARGV[ARG.maxLenEvents]
  local running = redis.call("ZCOUNT", KEYS[KEY.workers], "(" .. now, "+inf")
  -- nil on a fresh call (the guard is written); the first run's reply on a replay.
  local function replayOf(reply)
    local text = table.concat(reply, "|")
    if redis.call("SET", KEYS[KEY.replayGuard], text, "NX", "PX", ARGV[ARG.guardTtl]) then return nil end
    return replayedHandOff(redis.call("GET", KEYS[KEY.replayGuard]))
  end
  if custom and redis.call("EXISTS", key) == 1 then
    -- Only a staged add's hash carries a TTL: its job is not added until that add commits.
    if redis.call("PTTL", key) > 0 then return { id, -31, 0, running, 0, 0, "" } end
    local reply = { id, 2, 0, running, 0, 0, "" }
    local replay = replayOf(reply)
    if replay then return replay end
    if level >= 2 then
      redis.call("XADD", events, "MAXLEN", "~", maxLen, "*", "event", "duplicated", "jobId", id)
    end
    return reply
  end
  local meta = redis.call("HMGET", KEYS[KEY.meta], "paused", "concurrency", "max", "nq:limited", "nq:leaseMs",
    "nq:idEpoch")
  local epoch = ""
  if last > 0 then
    epoch = meta[6] or ARGV[ARG.token]
  elseif not custom and meta[6] ~= expectedEpoch then
    return { id, -32, 0, running, 0, 0, "" }
  end
  local lifo = ARGV[ARG.lifo] == "1"
  local handed = not meta[1] and not meta[2] and not meta[3] and meta[4] ~= "1"
    and running < tonumber(ARGV[ARG.maxWorkers])
  if handed then handed = redis.call("EXISTS", KEYS[KEY.limiter]) == 0 end
  if handed and not lifo then handed = redis.call("LLEN", KEYS[KEY.wait]) == 0 end

  local lease = 0
  if handed then
    lease = tonumber(meta[5]) or 0
    if lease < 1000 then lease = tonumber(ARGV[ARG.leaseMs]) end
  end
  local fields = { "name", ARGV[ARG.name], "data", ARGV[ARG.data], "opts", ARGV[ARG.opts],
    "timestamp", ARGV[ARG.timestamp], "delay", 0, "priority", 0 }
  if handed then
    -- nq:ho = this lease's processedOn: a later lease writes its own, so only this one matches.
    for _, v in ipairs({ "processedOn", now, "ats", 1, "nq:ho", now }) do fields[#fields + 1] = v end
  end
  local reply = { id, 1, handed and 1 or 0, running, lease, last, epoch }
  local replay = replayOf(reply)
  if replay then return replay end
  -- The queue's id epoch: a block is good while meta still holds it (obliterate deletes both).
  if last > 0 and not meta[6] then redis.call("HSET", KEYS[KEY.meta], "nq:idEpoch", epoch) end
  redis.call("HSET", key, unpack(fields))
  if level >= 2 then
    redis.call("XADD", events, "*", "event", "added", "jobId", id, "name", ARGV[ARG.name])
    redis.call("XADD", events, "MAXLEN", "~", maxLen, "*", "event", "waiting", "jobId", id)
  end
  if handed then
    redis.call("LPUSH", KEYS[KEY.active], id)
    redis.call("SET", key .. ":lock", ARGV[ARG.token], "PX", lease)
    redis.call("SADD", KEYS[KEY.stalled], id)
    if level >= 2 then redis.call("XADD", events, "*", "event", "active", "jobId", id, "prev", "waiting") end
    redis.call("ZADD", KEYS[KEY.workers], now + lease, ARGV[ARG.invocation])
    noteAttention(KEYS[KEY.attention], prefix, now + lease)
  else
    redis.call(lifo and "RPUSH" or "LPUSH", KEYS[KEY.wait], id)
    redis.call("ZADD", KEYS[KEY.marker], 0, "0")
    noteAttention(KEYS[KEY.attention], prefix, now)
  end
  return reply
end
