-- heapsort: the workload of wasmoon's own benchmark (bench/heapsort.lua in the wasmoon
-- repository: ten heapsorts of 20,000 random floats, each checked), written for this bench with
-- a fixed LCG instead of math.random so every VM sorts the same numbers. Returns a checksum.
local function heapsort(n, ra)
  local l, ir = (n >> 1) + 1, n
  while true do
    local rra
    if l > 1 then
      l = l - 1
      rra = ra[l]
    else
      rra = ra[ir]
      ra[ir] = ra[1]
      ir = ir - 1
      if ir == 1 then ra[1] = rra return end
    end
    local i, j = l, l * 2
    while j <= ir do
      if j < ir and ra[j] < ra[j + 1] then j = j + 1 end
      if rra < ra[j] then
        ra[i] = ra[j]
        i = j
        j = j + i
      else
        j = ir + 1
      end
    end
    ra[i] = rra
  end
end

local seed, sum = 42.0, 0
for _ = 1, 10 do
  local N, a = 20000, {}
  for i = 1, N do
    seed = (seed * 16807.0) % 2147483647.0
    a[i] = seed / 2147483647.0
  end
  heapsort(N, a)
  for i = 1, N - 1 do assert(a[i] <= a[i + 1]) end
  sum = sum + a[1] + a[N // 2] + a[N]
end
return string.format("%.9f", sum)
