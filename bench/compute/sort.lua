-- sort: the timed part of the Lua test suite's sort.lua as fengari runs it
-- (test/test-suite/sort.test.js in the fengari repository: 50,000 elements sorted with the
-- default order, an inverting comparator and an always-false comparator, then checked), written
-- for this bench with a fixed LCG instead of math.random. Returns a checksum.
local limit = 50000
local seed = 7.0
local function random()
  seed = (seed * 16807.0) % 2147483647.0
  return seed / 2147483647.0
end

local function check(a, f)
  f = f or function(x, y) return x < y end
  for n = #a, 2, -1 do assert(not f(a[n], a[n - 1])) end
end

local a = {}
for i = 1, limit do a[i] = random() end
table.sort(a)
check(a)
local sum = a[1] + a[limit]

for i = 1, limit do a[i] = random() end
local comparisons = 0
table.sort(a, function(x, y) comparisons = comparisons + 1 return y < x end)
check(a, function(x, y) return y < x end)
sum = sum + a[1] + a[limit]

for i = 1, limit do a[i] = false end
table.sort(a, function(x, y) return nil end)
for _, v in pairs(a) do assert(v == false) end

local s = {}
for i = 1, limit do s[i] = string.format("%08x", math.floor(random() * 2147483647.0)) end
table.sort(s)
check(s)
assert(comparisons > 0)
-- (the comparison count is not part of the checksum: Lua picks pivots at random for large arrays)
return string.format("%.9f %s %s", sum, s[1], s[limit])
