-- Reads back what encodeIds wrote.
local function decodeIds(text)
  local ids, at = {}, 1
  while at <= #text do
    local colon = string.find(text, ":", at, true)
    local length = tonumber(string.sub(text, at, colon - 1))
    ids[#ids + 1] = string.sub(text, colon + 1, colon + length)
    at = colon + length + 1
  end
  return ids
end
