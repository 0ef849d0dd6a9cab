-- Opens a single-job move under its replay guard. A replay answers `done`, what the first call
-- answered; a job that is gone (-1) or, when `fromSet` is given, not in it (-3; it is taken out
-- otherwise) is refused and the guard dropped, so a refusal writes nothing and may simply run again.
-- Returns the code to answer at once, or nil to go on with the move.
local function startGuardedMove(guardKey, guardTtl, done, jobKey, fromSet, jobId)
  -- Redis 6.2 form (no NX with GET): the GET runs only for a replay.
  local fresh = redis.call("SET", guardKey, done, "NX", "PX", guardTtl)
  if not fresh then return tonumber(redis.call("GET", guardKey)) end
  local code
  if redis.call("EXISTS", jobKey) == 0 then
    code = -1
  elseif fromSet and redis.call("ZREM", fromSet, jobId) == 0 then
    code = -3
  end
  if code then redis.call("DEL", guardKey) end
  return code
end
