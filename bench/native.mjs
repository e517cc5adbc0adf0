// The native benches (Rust, release profile), run through cargo and read back from what they print:
//  - `cargo bench --bench entry`: one section entry against a bare mlua Lua 5.5 state, interleaved;
//  - `cargo bench --bench var`: append N strings to var.list and read them back, N = 1k .. 64k.
// The compile (`cargo bench --no-run`) comes first and is not part of any figure. Writes
// bench/results/native.json.
//
//   node bench/native.mjs [--quick]      (--quick: var up to N = 8k only)
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { ROOT, QUICK, writeResults } from './results.mjs';

const started = performance.now();
const cargo = (args, env = {}) =>
  execFileSync('cargo', args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });

console.log('cargo bench --no-run (compile)');
cargo(['bench', '--bench', 'entry', '--bench', 'var', '--no-run']);

const figures = {};
const entryOut = cargo(['bench', '--bench', 'entry']);
process.stdout.write(entryOut);
// "  runvil entry      312.0    330.1    401.9" (min / median / max)
const row = (label) => {
  const m = new RegExp(`^\\s*${label}\\s+([\\d.]+)\\s+([\\d.]+)\\s+([\\d.]+)\\s*$`, 'm').exec(entryOut);
  if (!m) throw new Error(`cargo bench --bench entry printed no "${label}" row:\n${entryOut}`);
  const [min, median, max] = m.slice(1).map(Number);
  return { min, median, max };
};
const samples = Number(/(\d+) interleaved samples/.exec(entryOut)?.[1]);
const bare = row('bare Lua state');
figures.entry = {
  name: 'one section entry (native)', unit: 'µs', ...row('runvil entry'), runs: samples,
  peer: { name: 'a bare mlua Lua 5.5 state (native)', ...bare },
  ratio: row('ratio').median, ratioOf: 'the median of the per-pair ratios',
};

const varOut = cargo(['bench', '--bench', 'var'], QUICK ? { VAR_BENCH_MAX_K: '8' } : {});
process.stdout.write(varOut);
const varSamples = Number(/\((\d+) samples each\)/.exec(varOut)?.[1]);
const lines = [...varOut.matchAll(/^\s*(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$/gm)];
if (lines.length < 4) throw new Error(`cargo bench --bench var printed too few rows:\n${varOut}`);
for (const [, n, min, median, max, perItem] of lines) {
  figures[`var${n}`] = {
    name: `var: append ${Number(n).toLocaleString('en-US')} items, read them back`, unit: 'ms',
    min: Number(min), median: Number(median), max: Number(max), usPerItem: Number(perItem), items: Number(n), runs: varSamples,
  };
}
writeResults('native', 'cargo bench --bench entry; cargo bench --bench var', figures, started);
