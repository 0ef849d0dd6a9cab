-- Prepares a queue's batch buffers once per call. Adds read nothing from meta: the events cap comes
-- from the caller (BullMQ's Queue option streams.events.maxLen), and the "ready" marker is written
-- even while paused or at global concurrency, which BullMQ workers treat as a spurious wake-up
-- (they find nothing and block again). That saves one billed command on every add.
local function loadQueueMeta(q, maxLen)
  if q.maxLen then return end
  q.maxLen = maxLen
  q.leftPushes, q.rightPushes, q.prioritizedAdds, q.delayedAdds, q.dueScores = {}, {}, {}, {}, {}
  q.groupPushes, q.groupDelayedAdds, q.groupDueScores = {}, {}, {}
end
