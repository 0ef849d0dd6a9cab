--[[
sealStagedJobs: Makes a range of a staged add's job hashes permanent (PERSIST), just before its commit,
for an add with more staged hashes than the commit itself can persist within its time budget (auto
and generated ids first, custom ids only beyond the commit's share). The jobs stay outside every
structure until commitStagedJobs; should neither it nor an abort ever come, the sealed hashes stay
behind in no state (README, "Adds of any size are all or nothing"). Safe to replay.

KEYS
  replayGuard  this call's replay guard, <prefix>:nq-req:<queue>:<token>-p<step>
  stagedKeys  <stage>:keys or <stage>:custom-keys, a LIST of staged job hashes
ARGV
  from  int  first index into stagedKeys (0-based)
  to  int  last index into stagedKeys (inclusive)
  guardTtl  int  how long the replay guard lives (ms)
REPLY sealed
  count  {int}  how many hashes were sealed
REPLY gone  the range is short or a hash in it is gone (the staging expired): nothing is written
  code  {code}
CODES
  stagingGone  -30  the staging is gone or partial
EVENTS
  none
GLOBAL LOCK
  It persists the staged hashes whose keys it reads from the stage's list.
]]
-- @include checkIntegerArgs
-- @include replayedResult
-- @include saveResult

checkIntegerArgs("sealStagedJobs", { "from", "to", "guardTtl" })
local replayed = replayedResult(KEYS[KEY.replayGuard])
if replayed then return replayed end
local from, to = tonumber(ARGV[ARG.from]), tonumber(ARGV[ARG.to])
local keys = redis.call("LRANGE", KEYS[KEY.stagedKeys], from, to)
if #keys ~= to - from + 1 then return { -30 } end
local present = 0
for at = 1, #keys, 4000 do
  present = present + redis.call("EXISTS", unpack(keys, at, math.min(at + 3999, #keys)))
end
if present ~= #keys then return { -30 } end
for _, key in ipairs(keys) do redis.call("PERSIST", key) end
return saveResult(KEYS[KEY.replayGuard], { #keys }, ARGV[ARG.guardTtl])
