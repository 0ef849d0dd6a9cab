#!lua flags=allow-key-locking
--[[
trimEvents: Trims the queue's event stream to about `maxLength` entries (BullMQ's Queue.trimEvents:
XTRIM MAXLEN ~, which removes whole stream nodes only).

KEYS
  events  {P}events
ARGV
  maxLength  int  entries to keep, at least
REPLY
  removed  int  how many entries went
EVENTS
  none
]]
return redis.call("XTRIM", KEYS[KEY.events], "MAXLEN", "~", ARGV[ARG.maxLength])
