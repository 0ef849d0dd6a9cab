--[[
readDeadLetters: Reads one page of a dead-letter queue's wait list, failed or completed set, oldest
first, and returns the dead letters of one source queue (ids starting with idPrefix) with their name
and data. Read-only.

KEYS
  structure  the dead-letter queue's {P}wait, {P}failed or {P}completed
ARGV
  prefix  string  the dead-letter queue's key prefix {P}
  kind  "list"|"zset"  the structure's type
  idPrefix  string  dl:<source>:, what the source queue's dead letters' ids start with
  offset  int  entries to skip, oldest first
  count  int  most entries to look at
  maxBytes  int  stop after the entry that brings the letters' data past this many bytes
REPLY  letters whose hash is gone are left out
  looked  int  how many entries were looked at (fewer than count when the structure ended or
    maxBytes was reached)
  ended  int  1 when the structure has nothing after the page
  letters  (id string, name string, data string)...
EVENTS
  none
GLOBAL LOCK
  It reads the hashes of the dead letters it finds in the dead-letter queue's structures.
]]
local key, idPrefix = KEYS[KEY.structure], ARGV[ARG.idPrefix]
local offset, count = tonumber(ARGV[ARG.offset]), tonumber(ARGV[ARG.count])
local ids
if ARGV[ARG.kind] == "list" then
  -- The oldest job of a list is its rightmost.
  local range = redis.call("LRANGE", key, -(offset + count), -(offset + 1))
  ids = {}
  for i = #range, 1, -1 do ids[#ids + 1] = range[i] end
else
  ids = redis.call("ZRANGE", key, offset, offset + count - 1)
end
local out, bytes, maxBytes = { 0, #ids < count and 1 or 0 }, 0, tonumber(ARGV[ARG.maxBytes])
for i, id in ipairs(ids) do
  out[1] = i
  if string.sub(id, 1, #idPrefix) == idPrefix then
    local fields = redis.call("HMGET", ARGV[ARG.prefix] .. id, "name", "data")
    if fields[2] then
      out[#out + 1] = id
      out[#out + 1] = fields[1] or ""
      out[#out + 1] = fields[2]
      bytes = bytes + #fields[2]
      if bytes >= maxBytes then
        if i < #ids then out[2] = 0 end
        break
      end
    end
  end
end
return out
