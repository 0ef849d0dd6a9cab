#!lua flags=allow-key-locking
--[[
rateLimitGroup: Holds one group until `untilMs` (BullMQ Pro's worker.rateLimitGroup): the group leaves the
round-robin ring and no worker takes its jobs before then (ZADD GT: a later end wins); the
other groups keep going. The processor then throws Worker.RateLimitError(), which hands its job back
to the front of its group.

KEYS
  meta  {P}meta
  ring  {P}nq:groups
  limited  {P}nq:glimited
ARGV
  groupId  string  the group
  untilMs  int  when the limit ends (epoch ms)
REPLY
  ok  int  1
EVENTS
  none
]]
-- @include checkIntegerArgs
checkIntegerArgs("rateLimitGroup", { "untilMs" })
redis.call("ZADD", KEYS[KEY.limited], "GT", ARGV[ARG.untilMs], ARGV[ARG.groupId])
redis.call("ZREM", KEYS[KEY.ring], ARGV[ARG.groupId])
redis.call("HSET", KEYS[KEY.meta], "nq:glimited", 1)
return 1
