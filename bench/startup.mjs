// Start-up figures, each sample in a fresh Node process (V8 caches compiled wasm within a
// process), Runvil and wasmoon alternating (ABAB):
//  - import: the package's `await import(...)` (not part of the goals);
//  - createEngine: compile + instantiate (Runvil: `createEngine()`; wasmoon: `new LuaFactory()
//    .createEngine()`), timed inside the child from just before the call;
//  - first result: a trivial run right after it (Runvil: a one-block prompt returning 'ok';
//    wasmoon: doString("return 'ok'"));
//  - RSS added: the child's resident set after the first result less before createEngine.
// min / median / max over the samples, and the ratio of the medians. Goals: createEngine + first
// run at most 1.2x wasmoon's, the RSS one engine adds at most 2x.
// Variant arms (ARMS below, each with a label), interleaved with the two, each take one cost out
// of Runvil's first run, or put one into wasmoon's, to show where the time and memory go: V8's lazy
// compilation, drawing the run seed, V8's tier-up of the Lua interpreter loop.
// Then one more child of each under `--trace-wasm-compilation-times`: how many functions and bytes
// of wasm code the first result compiled, and how many functions V8 tiered up to TurboFan (exact
// for a given build, unlike the times; a tier-up still compiling when the child exits is not counted).
// Writes bench/results/startup.json, or bench/results/NAME.json with `--results NAME` (run.mjs runs
// it once more under Node 24 as `startup-node24`: V8's start-up costs differ between its versions).
//
//   node bench/startup.mjs [--quick] [--results NAME]   (against the current pkg/; RUNVIL_PKG=dir for another build)
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { ROOT, QUICK, versus, writeResults } from './results.mjs';
import { runvilChild as runvilChildOf, wasmoonChild } from './startup-child.mjs';

const started = performance.now();
const resultsAt = process.argv.indexOf('--results');
const RESULTS = resultsAt >= 0 ? process.argv[resultsAt + 1] : 'startup';
if (!/^startup[a-z0-9-]*$/.test(RESULTS ?? '')) throw new Error(`bench/startup.mjs: --results needs a name starting "startup", got ${RESULTS}`);
const RUNS = QUICK ? 5 : 11;
const PKG = pathToFileURL(`${resolve(ROOT, process.env.RUNVIL_PKG ?? 'pkg')}/index.js`).href;
const runvilChild = (options) => runvilChildOf(PKG, options);

// The two arms the goals compare, then variants that take one cost out of Runvil's first run (or
// put it into wasmoon's), to show where the time and the memory go.
const ARMS = {
  runvil: { child: runvilChild('undefined'), flags: [] },
  wasmoon: { child: wasmoonChild("return 'ok'", 'ok'), flags: [] },
  eager: { child: runvilChild('undefined'), flags: ['--no-wasm-lazy-compilation'],
    label: 'V8 compiling all wasm up front (`--no-wasm-lazy-compilation`)' },
  // Node's entry draws the default seed from the system's random device (js/core/seeds.js); this
  // arm draws it through Web Crypto inside the timed run, which loads Node's Web Crypto module.
  webCrypto: { child: runvilChild('{ seed: crypto.getRandomValues(new BigUint64Array(1))[0] }'), flags: [],
    label: 'the seed drawn through Web Crypto (`crypto.getRandomValues`), not the random device' },
  // V8 (Node 20) tiers a wasm function up to TurboFan once its Liftoff code has run "enough":
  // every loop back-edge spends the jump's distance in machine code, so the interpreter loop of a
  // Lua VM (about 21 KB of wasm) is tiered up after some dozens of Lua instructions. The Engine's
  // own Lua (bootstrap.lua) runs more than that in every first run; this arm never tiers up.
  untiered: { child: runvilChild('undefined'), flags: ['--wasm-tiering-budget=1000000000'],
    label: 'no tier-up to TurboFan (`--wasm-tiering-budget=1000000000`)' },
  // The same threshold in wasmoon: its first chunk runs a 30-step loop instead of `return 'ok'`.
  wasmoonLoop: { child: wasmoonChild('local s = 0 for i = 1, 30 do s = s + i end return s', 465), flags: [],
    label: 'wasmoon, its first chunk a 30-step loop' },
};

const sample = (name) =>
  JSON.parse(execFileSync(process.execPath, [...ARMS[name].flags, '--input-type=module', '-e', ARMS[name].child], { cwd: ROOT, encoding: 'utf8' }));

/** What the first result compiled (`source`, a child that runs once): V8's trace line per function and tier, summed. */
function compiled(source) {
  const lines = execFileSync(process.execPath, ['--trace-wasm-compilation-times', '--input-type=module', '-e', source], { cwd: ROOT, encoding: 'utf8' }).split('\n');
  const tier = (t) => lines.map((l) => new RegExp(`using ${t},.* bodysize (\\d+)`).exec(l)).filter(Boolean).map((m) => Number(m[1]));
  const liftoff = tier('Liftoff');
  return { functions: liftoff.length, bytes: liftoff.reduce((a, b) => a + b, 0), turbofan: tier('TurboFan').length };
}

const fmt = ({ min, median, max }, digits = 1) => `${median.toFixed(digits)} (min ${min.toFixed(digits)}, max ${max.toFixed(digits)})`;

const names = Object.keys(ARMS);
const samples = Object.fromEntries(names.map((name) => [name, []]));
for (let i = 0; i < RUNS; i++) {
  for (const name of i % 2 === 0 ? names : [...names].reverse()) samples[name].push(sample(name));
}
const GOALS = {
  sum: { max: 1.2, of: 'ratio', text: '≤ 1.2× wasmoon' },
  rss: { max: 2, of: 'ratio', text: '≤ 2× wasmoon' },
};
const MEASURES = [
  ['import', 'import of the package (fresh process)', 'ms', 1],
  ['create', 'createEngine (fresh process)', 'ms', 1],
  ['first', 'first trivial run right after createEngine', 'ms', 1],
  ['sum', 'createEngine + first run', 'ms', 1],
  ['rss', 'RSS added by one engine', 'MiB', 1 / 2 ** 20],
];
const of = (name, key, scale) => samples[name].map((s) => (key === 'sum' ? s.create + s.first : s[key]) * scale);
const figures = {};
console.log(`start-up, fresh process per sample (${RUNS} samples each, interleaved)`);
for (const [key, label, unit, scale] of MEASURES) {
  const f = versus(label, unit, of('runvil', key, scale), 'wasmoon', of('wasmoon', key, scale), GOALS[key]);
  f.runs = RUNS;
  figures[key] = f;
  console.log(`  ${label.padEnd(44)} runvil ${fmt(f)} ${unit}; wasmoon ${fmt(f.peer)} ${unit}; ratio ${f.ratio.toFixed(2)}`);
}
// Each variant against the arm it varies (Runvil's default, or wasmoon's `return 'ok'`).
for (const name of names.filter((n) => ARMS[n].label)) {
  const base = name.startsWith('wasmoon') ? 'wasmoon' : 'runvil';
  for (const [key, , unit, scale] of MEASURES) {
    const f = versus(ARMS[name].label, unit, of(name, key, scale), base, of(base, key, scale));
    f.runs = RUNS;
    figures[`${name}-${key}`] = f;
  }
  const t = (key) => `${figures[`${name}-${key}`].median.toFixed(1)} vs ${figures[`${name}-${key}`].peer.median.toFixed(1)}`;
  console.log(`  ${ARMS[name].label}: create ${t('create')} ms, first ${t('first')} ms, RSS ${t('rss')} MiB`);
}
const code = { runvil: compiled(runvilChildOf(PKG, 'undefined', false)), wasmoon: compiled(wasmoonChild("return 'ok'", 'ok', false)) };
figures.firstRunCode = {
  name: 'wasm code the first result compiles (Liftoff)', unit: 'bytes', value: code.runvil.bytes,
  functions: code.runvil.functions, turbofan: code.runvil.turbofan,
  peer: { name: 'wasmoon', value: code.wasmoon.bytes, functions: code.wasmoon.functions, turbofan: code.wasmoon.turbofan },
};
const codeLine = (c) => `${c.functions} functions, ${c.bytes} bytes, ${c.turbofan} tiered up`;
console.log(`  first result compiled: runvil ${codeLine(code.runvil)}; wasmoon ${codeLine(code.wasmoon)}`);
writeResults(RESULTS, RESULTS === 'startup' ? 'node bench/startup.mjs' : `node bench/startup.mjs --results ${RESULTS}`, figures, started);
