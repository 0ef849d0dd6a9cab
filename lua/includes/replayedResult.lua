-- What an earlier run of this very call answered (saveResult wrote it), or nil on a fresh call: a
-- replayed call returns that answer again and writes nothing.
-- @include decodeIds
local function replayedResult(guardKey)
  local saved = redis.call("GET", guardKey)
  if saved then return decodeIds(saved) end
  return nil
end
