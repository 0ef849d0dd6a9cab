-- Copies entry `index` of a repeated ARGV or KEYS group into `target` under its field names (the
-- generated ARG_GROUP or KEY_GROUP table, read with groupArg or groupKey), and returns `target`.
local function copyGroupFields(target, group, read, index)
  for field, offset in pairs(group) do
    if field ~= "first" and field ~= "size" then target[field] = read(index, offset) end
  end
  return target
end
