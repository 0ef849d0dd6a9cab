-- Whether a lock's value (false when the lock is gone) belongs to `token`: the token itself, or the
-- token as cancelJob marks it, `<token>|cancel|<reason>` — the holder still owns a cancelled job until
-- it acks. cancelReason returns the reason of such a mark, nil for any other value.
local function cancelReason(lock, token)
  if type(lock) ~= "string" or string.sub(lock, 1, #token + 8) ~= token .. "|cancel|" then return nil end
  return string.sub(lock, #token + 9)
end

local function holdsLock(lock, token)
  return lock == token or cancelReason(lock, token) ~= nil
end
