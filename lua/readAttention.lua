#!lua flags=no-writes,allow-key-locking
--[[
readAttention: Reads the sweeper's attention index whole, for a client without ZRANGE (the sweeper's
idle pass otherwise reads it with one plain ZRANGE … WITHSCORES).
Read-only with every key declared: Upstash takes shared read locks on these keys alone.

KEYS
  attention  <prefix>:nq:due (member: queue name, score: when it needs the sweeper, ms)
REPLY
  entries  {string...}  member, score, member, score…
EVENTS
  none
]]
return redis.call("ZRANGE", KEYS[KEY.attention], 0, -1, "WITHSCORES")
