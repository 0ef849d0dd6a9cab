-- Refuses, before a script's first write, the ARGV it turns into numbers (or hands Redis as counts,
-- TTLs and caps) only after writing: Redis never rolls a script back, so an argument found bad
-- half-way would leave a job moved out of one structure and into none. `names` are ARG names; each
-- must be a decimal integer. The error names the script and the argument, never its value.
local function checkIntegerArgs(script, names)
  for _, name in ipairs(names) do
    if not string.find(ARGV[ARG[name]] or "", "^%-?%d+$") then
      error(script .. ": argument " .. name .. " must be an integer")
    end
  end
end
