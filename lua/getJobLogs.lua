#!lua flags=no-writes,allow-key-locking
--[[
getJobLogs: Reads a range of a job's log lines and how many it has (BullMQ's Queue.getJobLogs).
Read-only with every key declared: Upstash takes shared read locks on these keys alone.

KEYS
  logs  {P}<jobId>:logs
ARGV
  from  int  first index, as LRANGE takes it (negative counts from the newest line)
  to  int  last index, inclusive
REPLY
  lines  {string...}  the lines in the list's order
  total  int  the total number of lines
EVENTS
  none
]]
return { redis.call("LRANGE", KEYS[KEY.logs], ARGV[ARG.from], ARGV[ARG.to]), redis.call("LLEN", KEYS[KEY.logs]) }
