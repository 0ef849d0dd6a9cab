-- BullMQ's delayed score for a job due at `due` ms: due * 4096 + seq, where seq is one more than the
-- highest score already used inside that millisecond (capped at 4095). Scores stay Lua numbers:
-- tostring() would cut them to 14 significant digits. A batch that places several jobs passes its
-- `batchScores` table (base → last score given): jobs of one batch often share a due ms, so its
-- sequence is looked up once and then counted on.
local function nextDelayedScore(delayedKey, due, batchScores)
  local base = due * 4096
  local score = batchScores and batchScores[base]
  if score then
    score = math.min(score + 1, base + 4095)
  else
    local last = redis.call("ZREVRANGEBYSCORE", delayedKey, base + 4095, base, "WITHSCORES", "LIMIT", 0, 1)
    score = last[2] and math.min(tonumber(last[2]) + 1, base + 4095) or base
  end
  if batchScores then batchScores[base] = score end
  return score
end
