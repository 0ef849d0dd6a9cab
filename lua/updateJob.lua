#!lua flags=allow-key-locking
--[[
updateJob: What a processor does to its own job while it runs: progress (with its event), a log
line (trimmed to keepLogs) or new data. The job must still exist.

KEYS
  job  {P}<jobId>
  logs  {P}<jobId>:logs
  events  {P}events
  meta  {P}meta
ARGV
  jobId  string  job id
  kind  "progress"|"log"|"data"  what the call updates
  value  string  progress JSON, the log line, or data JSON
  keepLogs  int  for a log line: keep only the newest N lines, 0 keeps all
  events  int  the queue's events level: 2 all (writes the progress event), 1 final or 0 none (does not)
REPLY done
  result  int  1 (progress, data) or the number of log lines
REPLY missing
  code  code
CODES
  jobNotFound  -1  the job does not exist
EVENTS
  progress {jobId, data} (events 2)
]]
-- @include eventsMaxLen
if redis.call("EXISTS", KEYS[KEY.job]) == 0 then return -1 end
local kind, value = ARGV[ARG.kind], ARGV[ARG.value]
if kind == "progress" then
  redis.call("HSET", KEYS[KEY.job], "progress", value)
  if ARGV[ARG.events] ~= "2" then return 1 end
  local maxLen = eventsMaxLen(KEYS[KEY.meta])
  redis.call("XADD", KEYS[KEY.events], "MAXLEN", "~", maxLen, "*", "event", "progress", "jobId", ARGV[ARG.jobId], "data", value)
  return 1
elseif kind == "data" then
  redis.call("HSET", KEYS[KEY.job], "data", value)
  return 1
end
local count = redis.call("RPUSH", KEYS[KEY.logs], value)
local keep = tonumber(ARGV[ARG.keepLogs]) or 0
if keep > 0 and count > keep then
  redis.call("LTRIM", KEYS[KEY.logs], -keep, -1)
  return keep
end
return count
