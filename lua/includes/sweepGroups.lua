-- The sweeper's look at a queue's groups: empties the group inbox, promotes due grouped delayed jobs
-- (up to `limit` each), brings
-- back groups whose rate limit ended, and counts the groups with ready jobs. One EXISTS for a queue
-- that has none of these.
-- Returns how many were promoted, the next grouped due time or limit end (ms, 0 for none) and the
-- ready groups.
-- @include groupKeys
-- @include promoteGroupDelayed
-- @include ringEndedLimits
-- @include drainGroupInbox
local function sweepGroups(q, now, limit)
  local g = groupKeys(q.prefix)
  if redis.call("EXISTS", g.delayed, g.ring, g.limited, g.inbox) == 0 then return 0, 0, 0 end
  drainGroupInbox(q.prefix, q.meta, limit)
  local promoted, nextDue = promoteGroupDelayed(q.prefix, q.meta, q.events, now, limit)
  local nextEnd = ringEndedLimits(g, now)
  if nextEnd > 0 and (nextDue == 0 or nextEnd < nextDue) then nextDue = nextEnd end
  return promoted, nextDue, redis.call("ZCARD", g.ring)
end
