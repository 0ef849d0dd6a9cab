-- Length-prefixed list of ids ("<bytes>:<id>" each), safe for ids holding any character; what the
-- replay guards store.
local function encodeIds(ids)
  local parts = {}
  for i, id in ipairs(ids) do parts[i] = #id .. ":" .. id end
  return table.concat(parts)
end
