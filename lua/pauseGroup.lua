#!lua flags=allow-key-locking
--[[
pauseGroup: Pauses or resumes one group of the queue (BullMQ Pro's pauseGroup / resumeGroup). A paused
group keeps its jobs and takes new ones; no worker leases from it until it is resumed, when it joins
the back of the round-robin ring if it has ready jobs. Its running jobs finish. The queue's meta
counts paused groups (`nq:gpaused`), so the lease reads the paused set only while one is paused.

KEYS
  meta  {P}meta
  ring  {P}nq:groups
  counter  {P}nq:gc
  paused  {P}nq:gpaused
  groupJobs  {P}nq:g:<gid>
ARGV
  groupId  string  the group
  pause  flag  "1" pauses, "" resumes
REPLY
  changed  int  1 when the group's state changed, 0 when it already was so
EVENTS
  none
]]
-- @include ringJoin
local gid = ARGV[ARG.groupId]
if ARGV[ARG.pause] == "1" then
  if redis.call("SADD", KEYS[KEY.paused], gid) == 0 then return 0 end
  redis.call("HINCRBY", KEYS[KEY.meta], "nq:gpaused", 1)
  redis.call("ZREM", KEYS[KEY.ring], gid)
  return 1
end
if redis.call("SREM", KEYS[KEY.paused], gid) == 0 then return 0 end
if redis.call("HINCRBY", KEYS[KEY.meta], "nq:gpaused", -1) <= 0 then redis.call("HDEL", KEYS[KEY.meta], "nq:gpaused") end
if redis.call("EXISTS", KEYS[KEY.groupJobs]) == 1 then ringJoin({ counter = KEYS[KEY.counter], ring = KEYS[KEY.ring] }, { gid }, "NX") end
return 1
