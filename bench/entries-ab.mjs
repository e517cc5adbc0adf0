// Builds compared on section entries: several Runvil packages (copies of pkg/ from different
// builds) and wasmoon's bare Lua state (as in entries.mjs) in one process, samples interleaved in
// rotating order (ABC, BCA, CAB, ...) after one unmeasured warm-up each. Each sample is the
// process's CPU time per entry (user + system; see compute-ab.mjs for why not wall time). For each
// package: median, min and max µs per entry, and the ratio of its median to the bare state's.
// Not part of `bench/run.mjs` (it compares builds: entries.mjs is the figure for the docs).
//
//   cp -r pkg /tmp/pkg-a; (change, ./build.sh build); node bench/entries-ab.mjs 21 /tmp/pkg-a pkg
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LuaFactory } from 'wasmoon';
import { stats } from './results.mjs';
import { SECTIONS, bareStates, entriesPrompt } from './entries.mjs';

const [runsArg, ...pkgs] = process.argv.slice(2);
const runs = Number(runsArg);
if (!Number.isInteger(runs) || runs < 1 || pkgs.length === 0) {
  console.error('usage: node bench/entries-ab.mjs RUNS PKG_DIR [PKG_DIR ...]');
  process.exit(2);
}
const src = entriesPrompt();

const cpuUs = async (fn, per) => {
  const c0 = process.cpuUsage();
  await fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / per;
};
const arms = [];
for (const dir of pkgs) {
  const { createEngine } = await import(pathToFileURL(resolve(dir, 'index.js')).href);
  const engine = await createEngine();
  arms.push({
    name: dir,
    run: () => cpuUs(async () => {
      const out = await engine.run(src);
      if (!out.ok) throw new Error(`${dir}: the entries prompt failed: ${JSON.stringify(out.error)}`);
    }, SECTIONS + 1), // the H1 pass is an entry too
  });
}
const lua = await new LuaFactory().getLuaModule();
arms.push({
  name: 'bare Lua state (wasmoon)',
  run: () => cpuUs(async () => bareStates(lua), SECTIONS),
});

for (const arm of arms) await arm.run(); // warm-up
const times = arms.map(() => []);
for (let i = 0; i < runs; i++) {
  for (let k = 0; k < arms.length; k++) {
    const j = (k + i) % arms.length;
    times[j].push(await arms[j].run());
  }
}
const bare = stats(times[arms.length - 1]).median;
console.log(`section entries, ${runs} interleaved samples of ${SECTIONS}, CPU µs per entry: median (min, max); median / bare's`);
arms.forEach((arm, j) => {
  const s = stats(times[j]);
  console.log(`  ${arm.name.padEnd(28)} ${s.median.toFixed(1)} (${s.min.toFixed(1)}, ${s.max.toFixed(1)})  ${(s.median / bare).toFixed(2)}x`);
});
