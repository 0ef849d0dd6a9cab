-- Takes acked jobs out of `active`, as LREM -1 per id would (the occurrence nearest the tail goes),
-- and returns id → true for each id that was there. From four ids on, one LRANGE and a rewrite of the
-- list (DEL, RPUSH of the rest in order) cost three commands however many jobs the call acks, while
-- a list longer than 4000 falls back to one LREM per id.
local function removeFromActive(activeKey, ids)
  local removed = {}
  if #ids == 0 then return removed end
  local list = #ids >= 4 and redis.call("LRANGE", activeKey, 0, 4000) or nil
  if not list or #list > 4000 then
    for _, id in ipairs(ids) do
      if redis.call("LREM", activeKey, -1, id) > 0 then removed[id] = true end
    end
    return removed
  end
  local wanted = {}
  for _, id in ipairs(ids) do wanted[id] = (wanted[id] or 0) + 1 end
  local keptReversed = {}
  for i = #list, 1, -1 do
    local id = list[i]
    if wanted[id] and wanted[id] > 0 then
      wanted[id] = wanted[id] - 1
      removed[id] = true
    else
      keptReversed[#keptReversed + 1] = id
    end
  end
  if #keptReversed == #list then return removed end
  redis.call("DEL", activeKey)
  if #keptReversed > 0 then
    local kept = {}
    for i = #keptReversed, 1, -1 do kept[#kept + 1] = keptReversed[i] end
    redis.call("RPUSH", activeKey, unpack(kept))
  end
  return removed
end
