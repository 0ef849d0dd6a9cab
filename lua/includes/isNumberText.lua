-- True when `text` is a plain decimal number ("12", "-3", "0.5"): what tonumber takes, minus "nan",
-- "inf" and exponents, which would reach Redis as scores or counts it refuses — after a write.
local function isNumberText(text)
  return type(text) == "string" and string.find(text, "^%-?%d+%.?%d*$") ~= nil
end
