-- BullMQ's delayed score for a job due at `due` ms: due * 4096 + seq, where seq is one more than the
-- highest score already used inside that millisecond (capped at 4095). Scores stay Lua numbers:
-- tostring() would cut them to 14 significant digits.
local function nextDelayedScore(delayedKey, due)
  local base = due * 4096
  local last = redis.call("ZREVRANGEBYSCORE", delayedKey, base + 4095, base, "WITHSCORES", "LIMIT", 0, 1)
  if last[2] then
    return math.min(tonumber(last[2]) + 1, base + 4095)
  end
  return base
end
