#!lua flags=allow-key-locking
--[[
advanceEventCursors: Records, after a forward, the last event forwarded per events stream, while this
sweeper still holds the lock (a sweeper that lost it must not move the cursor), and notes the queues
whose forward partly failed in the attention index, so that the next pass tries their events again.

KEYS
  lock  the sweeper lock
  cursors  hash: queue events key -> id of the last event forwarded
  attention  <prefix>:nq:due, the sweeper's attention index
ARGV
  token  string  the sweeper invocation's lock token
  again  string  the queues whose forward failed (length-prefixed names, "" for none)
ARGV repeated streams
  events  string  a queue's events key
  lastId  string  the id of the last event forwarded from it
REPLY
  recorded  int  1 recorded, 0 the lock is no longer this sweeper's
EVENTS
  none
]]
-- @include decodeIds
if redis.call("GET", KEYS[KEY.lock]) ~= ARGV[ARG.token] then return 0 end
for _, name in ipairs(decodeIds(ARGV[ARG.again])) do redis.call("ZADD", KEYS[KEY.attention], "LT", 0, name) end
for i = 1, ARG_GROUP_COUNT do
  redis.call("HSET", KEYS[KEY.cursors], groupArg(i, ARG_GROUP.events), groupArg(i, ARG_GROUP.lastId))
end
return 1
