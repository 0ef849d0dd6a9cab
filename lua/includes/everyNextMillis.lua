-- When an `every` schedule runs next (BullMQ 6.7.0's rule, so both libraries pick the same millis):
-- `every` ms after the previous run, or, when that is already past, the next slot at `offset` past a
-- multiple of `every`; the first run at startDate (when later than now), else at the next such slot
-- when an offset is given, else now. Returns the run time and the offset to store: the given one, or
-- where the run falls within its interval.
local function everyNextMillis(prev, every, now, offset, startDate)
  offset = tonumber(offset) or 0
  local function nextSlot()
    local slot = math.floor(now / every) * every + offset
    if slot <= now then slot = slot + every end
    return slot
  end
  local next
  if prev then
    next = prev + every
    if next < now then next = nextSlot() end
  elseif startDate then
    next = math.max(tonumber(startDate), now)
  elseif offset > 0 then
    next = nextSlot()
  else
    next = now
  end
  if offset == 0 then offset = next - math.floor(next / every) * every end
  return math.floor(next), math.floor(offset)
end
