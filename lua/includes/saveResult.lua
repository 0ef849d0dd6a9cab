-- Records a call's answer (a list of strings and small numbers) under its replay guard for `ttl` ms,
-- and returns it.
-- @include encodeIds
local function saveResult(guardKey, result, ttl)
  local texts = {}
  for i, value in ipairs(result) do texts[i] = type(value) == "number" and string.format("%d", value) or value end
  redis.call("SET", guardKey, encodeIds(texts), "PX", ttl)
  return result
end
