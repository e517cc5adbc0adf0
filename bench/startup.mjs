// Start-up figures (issue 9 item 3), each sample in a fresh Node process (V8 caches compiled
// wasm within a process), Runvil and wasmoon alternating (ABAB):
//  - createEngine: compile + instantiate (Runvil: `createEngine()`; wasmoon: `new LuaFactory()
//    .createEngine()`), timed inside the child from just before the call;
//  - first result: a trivial run right after it (Runvil: a one-block prompt returning 'ok';
//    wasmoon: doString("return 'ok'"));
//  - RSS added: the child's resident set after the first result less before createEngine.
// min / median / max over the samples, and the ratio of the medians. Goals (issue 9 item 3):
// createEngine + first run at most 1.5x wasmoon's, the RSS one engine adds at most 2x.
// A third arm runs Runvil's child under `node --no-wasm-lazy-compilation` (V8 compiles every wasm
// function up front): how much of the first run is V8 compiling the functions it touches.
// Writes bench/results/startup.json.
//
//   node bench/startup.mjs [--quick]
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { ROOT, QUICK, versus, writeResults } from './results.mjs';

const started = performance.now();
const RUNS = QUICK ? 5 : 11;

const CHILD = {
  runvil: `
    const { createEngine } = await import('./pkg/index.js');
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const engine = await createEngine();
    const t1 = performance.now();
    const out = await engine.run("# T\\n\\n\`\`\`lua\\nreturn 'ok'\\n\`\`\`\\n");
    const t2 = performance.now();
    if (out.result !== 'ok') throw new Error(JSON.stringify(out));
    console.log(JSON.stringify({ create: t1 - t0, first: t2 - t1, rss: process.memoryUsage().rss - rss0 }));`,
  wasmoon: `
    const { LuaFactory } = await import('wasmoon');
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const lua = await new LuaFactory().createEngine();
    const t1 = performance.now();
    const out = await lua.doString("return 'ok'");
    const t2 = performance.now();
    if (out !== 'ok') throw new Error(String(out));
    console.log(JSON.stringify({ create: t1 - t0, first: t2 - t1, rss: process.memoryUsage().rss - rss0 }));`,
};

CHILD.eager = CHILD.runvil;
const FLAGS = { runvil: [], wasmoon: [], eager: ['--no-wasm-lazy-compilation'] };

const sample = (name) =>
  JSON.parse(execFileSync(process.execPath, [...FLAGS[name], '--input-type=module', '-e', CHILD[name]], { cwd: ROOT, encoding: 'utf8' }));

const fmt = ({ min, median, max }, digits = 1) => `${median.toFixed(digits)} (min ${min.toFixed(digits)}, max ${max.toFixed(digits)})`;

const samples = { runvil: [], wasmoon: [], eager: [] };
for (let i = 0; i < RUNS; i++) {
  const order = i % 2 === 0 ? ['runvil', 'wasmoon', 'eager'] : ['eager', 'wasmoon', 'runvil'];
  for (const name of order) samples[name].push(sample(name));
}
const GOALS = {
  sum: { max: 1.5, of: 'ratio', text: '≤ 1.5× wasmoon' },
  rss: { max: 2, of: 'ratio', text: '≤ 2× wasmoon' },
};
const figures = {};
console.log(`start-up, fresh process per sample (${RUNS} samples each, interleaved)`);
for (const [key, label, unit, scale] of [
  ['create', 'createEngine (fresh process)', 'ms', 1],
  ['first', 'first trivial run right after createEngine', 'ms', 1],
  ['sum', 'createEngine + first run', 'ms', 1],
  ['rss', 'RSS added by one engine', 'MiB', 1 / 2 ** 20],
]) {
  const of = (name) => samples[name].map((s) => (key === 'sum' ? s.create + s.first : s[key]) * scale);
  const f = versus(label, unit, of('runvil'), 'wasmoon', of('wasmoon'), GOALS[key]);
  f.runs = RUNS;
  figures[key] = f;
  console.log(`  ${label.padEnd(44)} runvil ${fmt(f)} ${unit}; wasmoon ${fmt(f.peer)} ${unit}; ratio ${f.ratio.toFixed(2)}`);
}
for (const [key, label] of [['create', 'createEngine'], ['first', 'first trivial run']]) {
  const f = versus(`${label} under --no-wasm-lazy-compilation`, 'ms', samples.eager.map((s) => s[key]), 'Runvil, lazy compilation (the default)', samples.runvil.map((s) => s[key]));
  f.runs = RUNS;
  figures[`${key}Eager`] = f;
  console.log(`  ${f.name.padEnd(44)} ${fmt(f)} ms; by default ${fmt(f.peer)} ms`);
}
writeResults('startup', 'node bench/startup.mjs', figures, started);
