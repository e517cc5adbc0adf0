-- binary-trees: allocate and walk perfect binary trees (the Computer Language Benchmarks Game
-- task "binary-trees", https://benchmarksgame-team.pages.debian.net/benchmarksgame/description/binarytrees.html),
-- written for this bench; depth 13. Returns the check counts as the checksum.
local function make(depth)
  if depth == 0 then return {} end
  depth = depth - 1
  return { make(depth), make(depth) }
end

local function check(tree)
  local left = tree[1]
  if left then return 1 + check(left) + check(tree[2]) end
  return 1
end

local N, mindepth = 13, 4
local maxdepth = math.max(mindepth + 2, N)
local out = { check(make(maxdepth + 1)) }
local longlived = make(maxdepth)
for depth = mindepth, maxdepth, 2 do
  local iterations = 1 << (maxdepth - depth + mindepth)
  local sum = 0
  for _ = 1, iterations do sum = sum + check(make(depth)) end
  out[#out + 1] = sum
end
out[#out + 1] = check(longlived)
return table.concat(out, " ")
