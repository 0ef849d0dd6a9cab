-- The Redis Cluster hash tag of every key that starts with `keyPrefix`: the text between its first "{"
-- and the next "}" when that is not empty. Nil when there is none: such keys spread over slots.
-- core/redis/hash-slot.ts computes the same.
local function hashTagOf(keyPrefix)
  local open = string.find(keyPrefix, "{", 1, true)
  if not open then return nil end
  local close = string.find(keyPrefix, "}", open + 1, true)
  if not close or close == open + 1 then return nil end
  return string.sub(keyPrefix, open + 1, close - 1)
end
