// Builds compared on the Lua compute set: several Runvil packages (copies of pkg/ from different
// builds) and wasmoon in one process, samples interleaved in rotating order (ABC, BCA, CAB, ...)
// after one unmeasured warm-up each. For each package and program: the ratio to wasmoon of the
// median and of the minimum, and their geometric means. Each sample is the process's CPU time
// (user + system), not the wall clock: on the shared machine another process's work stretches
// wall time but not this process's CPU time, which made the spread of single runs smaller. Not
// part of `bench/run.mjs` (it compares builds, not Runvil with its peers: that is compute.mjs).
//
//   cp -r pkg /tmp/pkg-a; (change, ./build.sh build); node bench/compute-ab.mjs 15 /tmp/pkg-a pkg
//   PROGRAMS=sort,n-body node bench/compute-ab.mjs 15 /tmp/pkg-a pkg    (a subset of the set)
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROGRAMS as ALL, runInRunvil } from './compute.mjs';
import { geomean, stats } from './results.mjs';

const [runsArg, ...pkgs] = process.argv.slice(2);
const runs = Number(runsArg);
if (!Number.isInteger(runs) || runs < 1 || pkgs.length === 0) {
  console.error('usage: node bench/compute-ab.mjs RUNS PKG_DIR [PKG_DIR ...]');
  process.exit(2);
}
const programs = process.env.PROGRAMS ? process.env.PROGRAMS.split(',') : ALL;
for (const p of programs) if (!ALL.includes(p)) throw new Error(`unknown program ${p} (the set: ${ALL.join(', ')})`);

const { LuaFactory } = await import('wasmoon');
const engines = [];
for (const dir of pkgs) {
  const { createEngine } = await import(pathToFileURL(resolve(dir, 'index.js')).href);
  engines.push(await createEngine());
}
const median = (xs) => stats(xs).median;
const cpuMs = async (fn) => {
  const c0 = process.cpuUsage();
  const value = await fn();
  const c = process.cpuUsage(c0);
  return [(c.user + c.system) / 1000, String(value)];
};

const byMedian = pkgs.map(() => []);
const byMin = pkgs.map(() => []);
for (const program of programs) {
  const code = readFileSync(new URL(`./compute/${program}.lua`, import.meta.url), 'utf8');
  const wasmoon = await new LuaFactory().createEngine();
  const vms = [
    () => wasmoon.doString(code),
    ...engines.map((engine) => () => runInRunvil(engine, code, program)),
  ];
  const times = vms.map(() => []);
  const sums = new Set();
  for (const vm of vms) sums.add(String(await vm()));
  for (let i = 0; i < runs; i++) {
    for (let k = 0; k < vms.length; k++) {
      const j = (k + i) % vms.length;
      const [t, v] = await cpuMs(vms[j]);
      times[j].push(t);
      sums.add(v);
    }
  }
  wasmoon.global.close();
  if (sums.size !== 1) throw new Error(`${program}: the VMs disagree on the checksum: ${[...sums].join(' | ')}`);
  const cells = pkgs.map((_, a) => {
    const rMed = median(times[a + 1]) / median(times[0]);
    const rMin = Math.min(...times[a + 1]) / Math.min(...times[0]);
    byMedian[a].push(rMed);
    byMin[a].push(rMin);
    return `${rMed.toFixed(3)} / ${rMin.toFixed(3)}`;
  });
  console.log(`${program.padEnd(14)} wasmoon median ${median(times[0]).toFixed(1).padStart(7)} ms   ${cells.join('   ')}`);
}
console.log(`${'geomean'.padEnd(14)} ${' '.repeat(25)}   ${pkgs.map((_, a) => `${geomean(byMedian[a]).toFixed(3)} / ${geomean(byMin[a]).toFixed(3)}`).join('   ')}`);
console.log(`(ratio to wasmoon of the median / of the minimum CPU time, ${runs} samples each; columns: ${pkgs.join(', ')})`);
