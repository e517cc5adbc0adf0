-- fannkuch-redux: pancake flips over every permutation of 1..n (the Computer Language Benchmarks
-- Game task "fannkuch-redux",
-- https://benchmarksgame-team.pages.debian.net/benchmarksgame/description/fannkuchredux.html),
-- written for this bench; n = 9. Returns the checksum and the maximum flip count.
local function fannkuch(n)
  local perm, perm1, count = {}, {}, {}
  local maxflips, checksum, sign = 0, 0, 1
  for i = 0, n - 1 do perm1[i] = i end
  local r = n
  while true do
    while r ~= 1 do count[r - 1] = r; r = r - 1 end
    for i = 0, n - 1 do perm[i] = perm1[i] end
    local flips = 0
    local k = perm[0]
    while k ~= 0 do
      local i, j = 0, k
      while i < j do
        perm[i], perm[j] = perm[j], perm[i]
        i, j = i + 1, j - 1
      end
      flips = flips + 1
      k = perm[0]
    end
    if flips > maxflips then maxflips = flips end
    checksum = checksum + sign * flips
    sign = -sign
    -- next permutation (the rotation order the task prescribes)
    while true do
      if r == n then return checksum, maxflips end
      local first = perm1[0]
      for i = 0, r - 1 do perm1[i] = perm1[i + 1] end
      perm1[r] = first
      count[r] = count[r] - 1
      if count[r] > 0 then break end
      r = r + 1
    end
  end
end

local checksum, flips = fannkuch(9)
return checksum .. " " .. flips
