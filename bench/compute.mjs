// Lua compute: the programs in bench/compute/ (each cites its source) run by Runvil (as a
// `## Main` prompt, budget lifted) and wasmoon in the same process with interleaved samples
// (the order alternates every round: AB, BA, AB, ...), and by native lua5.4 (timed inside Lua
// with os.clock). Reports min/median/max per VM and program, every program's ratio to native,
// and the geometric mean of the ratios. The VMs must agree on every checksum. Goal: Runvil at
// least as fast as wasmoon, the other Lua in wasm, geometric mean of runvil / wasmoon over the set.
// Writes bench/results/compute.json.
//
//   node bench/compute.mjs [--quick] [--runs N]    (against the current pkg/)
import { readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { QUICK, isMain, writeResults } from './results.mjs';

const DIR = fileURLToPath(new URL('./compute/', import.meta.url));
// Five Benchmarks Game tasks, then the peers' own benchmarks (wasmoon's heapsort, fengari's sort
// tests): programs others measure Lua with, in the order docs/performance.md lists them.
export const PROGRAMS = ['binary-trees', 'n-body', 'spectral-norm', 'fannkuch', 'mandelbrot', 'heapsort', 'sort'];

import { stats, geomean } from './results.mjs';
const f1 = (x) => x.toFixed(1).padStart(8);

async function timed(fn) {
  const t0 = performance.now();
  const value = await fn();
  return [performance.now() - t0, String(value)];
}

/** Runs a program of the set in a Runvil engine, as one section of a prompt, with the budget lifted; answers its result. */
export async function runInRunvil(engine, code, program) {
  const o = await engine.run(`# Bench\n\n## Main\n\n\`\`\`lua\n${code}\n\`\`\`\n`, { seed: 1, limits: { instructions: 1e15 } });
  if (!o.ok) throw new Error(`runvil, ${program}: ${o.error.kind}: ${o.error.message}`);
  return o.result;
}

export async function runCompute({ runs = 5, createEngine } = {}) {
  if (!createEngine) ({ createEngine } = await import('../pkg/index.js'));
  const { LuaFactory } = await import('wasmoon');
  const engine = await createEngine();
  // A fresh wasmoon engine per program: one engine reused across programs has failed with
  // "memory access out of bounds" inside wasmoon after a few hundred MB of garbage.
  let wasmoon = null;
  const sources = Object.fromEntries(PROGRAMS.map((p) => [p, readFileSync(join(DIR, `${p}.lua`), 'utf8')]));
  for (const f of readdirSync(DIR)) {
    if (f.endsWith('.lua') && !PROGRAMS.includes(f.slice(0, -4))) throw new Error(`bench/compute/${f} is not in PROGRAMS`);
  }

  const vms = {
    runvil: (code, program) => runInRunvil(engine, code, program),
    wasmoon: (code) => wasmoon.doString(code),
  };

  const results = {};
  const dir = mkdtempSync(join(tmpdir(), 'runvil-compute-'));
  try {
    for (const program of PROGRAMS) {
      const code = sources[program];
      wasmoon?.global.close();
      wasmoon = await new LuaFactory().createEngine();
      const times = { runvil: [], wasmoon: [], native: [] };
      const sums = new Set();
      // One warm-up run each (not counted): both VMs compile their wasm tiers lazily.
      for (const vm of Object.values(vms)) sums.add(String(await vm(code)));
      for (let i = 0; i < runs; i++) {
        const order = i % 2 ? ['wasmoon', 'runvil'] : ['runvil', 'wasmoon'];
        for (const name of order) {
          const [t, v] = await timed(() => vms[name](code, program));
          times[name].push(t);
          sums.add(v);
        }
      }
      const file = join(dir, `${program}.lua`);
      writeFileSync(file, `local f = assert(load(${JSON.stringify(code)}))\nlocal t0 = os.clock()\nlocal r = f()\nio.write((os.clock() - t0) * 1000, "\\t", tostring(r))\n`);
      for (let i = 0; i < runs; i++) {
        const [t, v] = execFileSync('lua5.4', [file]).toString().split('\t');
        times.native.push(Number(t));
        sums.add(v);
      }
      if (sums.size !== 1) throw new Error(`${program}: the VMs disagree on the checksum: ${[...sums].join(' | ')}`);
      const r = { checksum: [...sums][0] };
      for (const [name, xs] of Object.entries(times)) r[name] = stats(xs);
      r.runvilToNative = r.runvil.median / r.native.median;
      r.wasmoonToNative = r.wasmoon.median / r.native.median;
      r.runvilToWasmoon = r.runvil.median / r.wasmoon.median;
      results[program] = r;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    wasmoon?.global.close();
  }
  const summary = {
    runs,
    runvilToNative: geomean(PROGRAMS.map((p) => results[p].runvilToNative)),
    wasmoonToNative: geomean(PROGRAMS.map((p) => results[p].wasmoonToNative)),
    runvilToWasmoon: geomean(PROGRAMS.map((p) => results[p].runvilToWasmoon)),
  };
  return { programs: results, summary };
}

export function printCompute({ programs, summary }) {
  console.log(`\nLua compute, ${summary.runs} interleaved samples per VM (ms: min / median / max):`);
  console.log(`  ${'program'.padEnd(14)} ${'native lua5.4'.padStart(26)} ${'wasmoon'.padStart(26)} ${'runvil'.padStart(26)}   w/n    r/n    r/w`);
  for (const [p, r] of Object.entries(programs)) {
    const cell = (s) => `${f1(s.min)}${f1(s.median)}${f1(s.max)}  `;
    console.log(`  ${p.padEnd(14)} ${cell(r.native)}${cell(r.wasmoon)}${cell(r.runvil)} ${r.wasmoonToNative.toFixed(2).padStart(5)}  ${r.runvilToNative.toFixed(2).padStart(5)}  ${r.runvilToWasmoon.toFixed(2).padStart(5)}`);
  }
  console.log(`  geomean of ratios: wasmoon ${summary.wasmoonToNative.toFixed(2)}x native, runvil ${summary.runvilToNative.toFixed(2)}x native, runvil/wasmoon ${summary.runvilToWasmoon.toFixed(2)}`);
}

/** The figures of bench/results/compute.json: one per program, and the geometric means. */
export function computeFigures({ programs, summary }) {
  const figures = {};
  for (const [p, r] of Object.entries(programs)) {
    const { samples, ...native } = r.native;
    figures[p] = {
      name: p, unit: 'ms', ...r.runvil, peer: { name: 'wasmoon', ...r.wasmoon }, ratio: r.runvilToWasmoon,
      native: { name: 'native lua5.4', ...native, samples }, runvilToNative: r.runvilToNative, wasmoonToNative: r.wasmoonToNative,
      checksum: r.checksum, runs: summary.runs,
    };
  }
  figures.geomean = {
    name: `Lua compute, geometric mean over ${PROGRAMS.length} programs: runvil / wasmoon`, unit: '×', value: summary.runvilToWasmoon,
    runvilToNative: summary.runvilToNative, wasmoonToNative: summary.wasmoonToNative, runs: summary.runs,
    goal: { max: 1, of: 'value', text: 'at least as fast as wasmoon (≤ 1×)' },
  };
  return figures;
}

if (isMain(import.meta.url)) {
  const started = performance.now();
  const i = process.argv.indexOf('--runs');
  const runs = i > 0 ? Number(process.argv[i + 1]) : QUICK ? 2 : 5;
  const r = await runCompute({ runs });
  printCompute(r);
  writeResults('compute', i > 0 ? `node bench/compute.mjs --runs ${runs}` : 'node bench/compute.mjs', computeFigures(r), started);
}
