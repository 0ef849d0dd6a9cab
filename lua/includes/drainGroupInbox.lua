-- Moves up to `limit` jobs of the queue's group inbox (nq:ginbox, a LIST: grouped jobs a call made
-- ready without building their group's key — a flow parent released by its last child's ack, whose
-- keys are declared ahead) into their groups, at the front as BullMQ puts a released parent. Drops
-- the meta's `nq:ginbox` flag once the inbox is empty. Returns how many moved.
-- @include groupKeys
-- @include pushGroupJobs
local function drainGroupInbox(prefix, metaKey, limit)
  local inbox = groupKeys(prefix).inbox
  local ids = redis.call("LRANGE", inbox, 0, limit - 1)
  if #ids == 0 then
    redis.call("HDEL", metaKey, "nq:ginbox")
    return 0
  end
  redis.call("LTRIM", inbox, #ids, -1)
  local items = {}
  for _, id in ipairs(ids) do
    local fields = redis.call("HMGET", prefix .. id, "gid", "priority")
    if fields[1] then items[#items + 1] = { gid = fields[1], id = id, priority = fields[2], front = true } end
  end
  pushGroupJobs(prefix, metaKey, items)
  if #ids < limit then redis.call("HDEL", metaKey, "nq:ginbox") end
  return #ids
end
