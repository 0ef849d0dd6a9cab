#!lua flags=no-writes,allow-key-locking
--[[
getDependencyCounts: Counts a parent's children by outcome.
Read-only with every key declared: Upstash takes shared read locks on these keys alone.

KEYS
  dependencies  {P}<jobId>:dependencies
  processed  {P}<jobId>:processed
  failed  {P}<jobId>:failed
  unsuccessful  {P}<jobId>:unsuccessful
REPLY
  unprocessed  int  children still pending
  processed  int  children done
  ignored  int  failed but ignored or continued
  failed  int  unsuccessful
EVENTS
  none
]]
return { redis.call("SCARD", KEYS[KEY.dependencies]), redis.call("HLEN", KEYS[KEY.processed]),
  redis.call("HLEN", KEYS[KEY.failed]), redis.call("ZCARD", KEYS[KEY.unsuccessful]) }
