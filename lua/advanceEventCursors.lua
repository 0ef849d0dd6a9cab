--[[
advanceEventCursors: Records, after a successful forward, the last event forwarded per events stream,
while this sweeper still holds the lock (a sweeper that lost it must not move the cursor).

KEYS
  lock  the sweeper lock
  cursors  hash: queue events key -> id of the last event forwarded
ARGV
  token  the sweeper invocation's lock token
ARGV repeated streams
  events  a queue's events key
  lastId  the id of the last event forwarded from it
REPLY
  recorded  int  1 recorded, 0 the lock is no longer this sweeper's
EVENTS
  none
]]
if redis.call("GET", KEYS[KEY.lock]) ~= ARGV[ARG.token] then return 0 end
for i = 1, ARG_GROUP_COUNT do
  redis.call("HSET", KEYS[KEY.cursors], groupArg(i, ARG_GROUP.events), groupArg(i, ARG_GROUP.lastId))
end
return 1
