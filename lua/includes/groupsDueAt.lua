-- A worker call's look at grouped work coming due (`meta` as leaseReadyJobs reads it): promotes due
-- grouped delayed jobs when `promote` (an open call), and returns the earliest time (ms, 0 for none)
-- a grouped delayed job comes due or a rate-limited group's limit ends: the worker's next call then
-- is an open one.
-- @include promoteGroupDelayed
local function groupsDueAt(q, meta, promote)
  local due = 0
  if meta[5] or q.groupEarliestDue then
    local first = redis.call("ZRANGE", q.prefix .. "nq:gdelayed", 0, 0, "WITHSCORES")
    due = first[2] and math.floor(tonumber(first[2]) / 4096) or 0
    if promote and due > 0 and due <= q.now then
      due = select(2, promoteGroupDelayed(q.prefix, q.meta, q.events, q.now, 1000, q.level))
    end
  end
  if meta[7] then
    local first = redis.call("ZRANGE", q.prefix .. "nq:glimited", 0, 0, "WITHSCORES")
    local ends = first[2] and tonumber(first[2]) or 0
    if ends > 0 and (due == 0 or ends < due) then due = ends end
  end
  return due
end
