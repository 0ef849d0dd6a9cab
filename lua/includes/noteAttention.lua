-- Tells the sweeper a queue needs a look by `when` (ms): the queue's entry in its prefix's attention
-- index (`indexKey` = <prefix>:nq:due, score = when, member = the queue's name) moves earlier, never
-- later (ZADD LT adds an absent entry). The sweeper moves it later, or removes it, once it has looked.
-- `queuePrefix` is the queue's key prefix <prefix>:<queue>:; a queue under another prefix (a dead
-- letter or a parent there) is left alone: its index is another key.
local function noteAttention(indexKey, queuePrefix, when)
  local prefix = string.sub(indexKey, 1, -8)
  if string.sub(queuePrefix, 1, #prefix + 1) ~= prefix .. ":" then return end
  redis.call("ZADD", indexKey, "LT", when, string.sub(queuePrefix, #prefix + 2, -2))
end
