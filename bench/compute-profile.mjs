// Where one program of the Lua compute set spends its time: the program run RUNS times in a Runvil
// package or in wasmoon under V8's sampling profiler (the one `node --cpu-prof` uses), then the
// functions by self time. A package keeps the VM's function names only when its wasm-opt step
// kept them (build.sh's wasm-opt line with -g in place of --strip-debug); wasmoon's module has none.
//
//   node bench/compute-profile.mjs PKG_DIR binary-trees 15
//   node bench/compute-profile.mjs wasmoon binary-trees 15
import { Session } from 'node:inspector/promises';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROGRAMS, runInRunvil } from './compute.mjs';

const [target, program, runsArg, topArg] = process.argv.slice(2);
const runs = Number(runsArg);
if (!target || !PROGRAMS.includes(program) || !Number.isInteger(runs) || runs < 1) {
  console.error(
    `usage: node bench/compute-profile.mjs PKG_DIR|wasmoon PROGRAM RUNS [TOP] (programs: ${PROGRAMS.join(', ')})`,
  );
  process.exit(2);
}
const top = Number(topArg ?? 30);
const code = readFileSync(new URL(`./compute/${program}.lua`, import.meta.url), 'utf8');

let run;
if (target === 'wasmoon') {
  const { LuaFactory } = await import('wasmoon');
  const lua = await new LuaFactory().createEngine();
  run = () => lua.doString(code);
} else {
  const { createEngine } = await import(pathToFileURL(resolve(target, 'index.js')).href);
  const engine = await createEngine();
  run = () => runInRunvil(engine, code, program);
}
await run(); // warm-up, unprofiled

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.start');
const c0 = process.cpuUsage();
for (let i = 0; i < runs; i++) await run();
const c = process.cpuUsage(c0);
const { profile } = await session.post('Profiler.stop');
session.disconnect();

// Self time per function name: each sample's time goes to the node it landed in.
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  const f = byId.get(id).callFrame;
  const name = f.functionName || `(${f.url.split('/').pop() || 'anonymous'})`;
  self.set(name, (self.get(name) ?? 0) + dt);
  total += dt;
});
console.log(`${target} ${program}: ${((c.user + c.system) / 1000 / runs).toFixed(1)} ms CPU per run, ${runs} runs`);
for (const [name, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${((100 * t) / total).toFixed(1).padStart(5)}%  ${name}`);
}
