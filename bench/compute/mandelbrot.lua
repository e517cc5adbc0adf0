-- mandelbrot: the Mandelbrot set as a 1-bit bitmap (the Computer Language Benchmarks Game task
-- "mandelbrot", https://benchmarksgame-team.pages.debian.net/benchmarksgame/description/mandelbrot.html),
-- written for this bench; 400 x 400, 50 iterations. Instead of writing the PBM file it returns a
-- checksum of the bitmap's bytes.
local N, ITER = 400, 50
local sum = 0
for y = 0, N - 1 do
  local ci = 2.0 * y / N - 1.0
  local bits, bit = 0, 128
  for x = 0, N - 1 do
    local cr = 2.0 * x / N - 1.5
    local zr, zi, zr2, zi2 = 0.0, 0.0, 0.0, 0.0
    local inside = true
    for _ = 1, ITER do
      zi = 2.0 * zr * zi + ci
      zr = zr2 - zi2 + cr
      zr2, zi2 = zr * zr, zi * zi
      if zr2 + zi2 > 4.0 then inside = false break end
    end
    if inside then bits = bits | bit end
    bit = bit >> 1
    if bit == 0 or x == N - 1 then
      sum = (sum * 31 + bits) % 1000000007
      bits, bit = 0, 128
    end
  end
end
return tostring(sum)
