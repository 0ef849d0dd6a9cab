#!lua flags=allow-key-locking
--[[
deduplicationKey: Reads or deletes a deduplication window, as BullMQ's Queue.getDeduplicationJobId
(GET) and Queue.removeDeduplicationKey (DEL, whichever job owns it; a stored `dn:` next job stays).

KEYS
  key  {P}de:<deduplicationId>
ARGV
  remove  flag  "1" to delete the key, "" to read it
REPLY owner  reading
  jobId  string?  the owning job id, nil when there is no window
REPLY removed  deleting
  count  int  1 deleted, 0 there was none
EVENTS
  none
]]
if ARGV[ARG.remove] == "1" then return redis.call("DEL", KEYS[KEY.key]) end
return redis.call("GET", KEYS[KEY.key])
