#!lua flags=allow-key-locking
--[[
releaseLock: Releases a lock only if this token still holds it.

KEYS
  lock  the lock key
ARGV
  token  string  the holder's token
REPLY
  released  int  1 released, 0 not held by this token
EVENTS
  none
]]
if redis.call("GET", KEYS[KEY.lock]) == ARGV[ARG.token] then
  redis.call("DEL", KEYS[KEY.lock])
  return 1
end
return 0
