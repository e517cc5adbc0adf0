// Every benchmark, each script in a fresh Node process (one suite's heap, compiled wasm and
// garbage do not colour the next), one after the other; each writes bench/results/<suite>.json.
// Then tools/perf-doc.mjs regenerates the figure tables of docs/performance.md from them.
//
//   node bench/run.mjs [--quick] [--no-browser] [--no-native] [--only a,b]
//
// --quick       fewer samples (a smoke run, about two minutes); the results are marked quick and
//               the doc is rendered to bench/results/performance.quick.md, never docs/ (blocks
//               of skipped suites say they were not measured)
// --no-browser  skip the suites that need Chromium (browser-store, playground-load)
// --no-native   skip the native cargo benches (they compile the crate natively first)
// --only a,b    run only these suites (their earlier results stay for the others)
// The default is the full truth: every suite.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { ROOT, RESULTS_DIR } from './results.mjs';

/** The Node 24 that `./build.sh setup` installs (tools/node24), for suites whose peer needs it. */
const NODE24 = join(ROOT, 'tools/node24/node_modules/node24/bin/node');

/** The suites, in run order: name, script (with its arguments), what it needs beyond Node and
 * pkg/, and the Node that runs it (the machine's own unless `node24`). */
export const SUITES = [
  { name: 'engine', script: 'bench/engine.mjs' },
  { name: 'compute', script: 'bench/compute.mjs' },
  { name: 'turns', script: 'bench/turns.mjs' },
  { name: 'entries', script: 'bench/entries.mjs' },
  { name: 'startup', script: 'bench/startup.mjs' },
  // Start-up again under the current Node LTS: compiling, tiering and releasing wasm differ by V8.
  { name: 'startup-node24', script: 'bench/startup.mjs', args: ['--results', 'startup-node24'], node: 'node24' },
  { name: 'rounds', script: 'bench/rounds.mjs' },
  { name: 'fanout', script: 'bench/fanout.mjs', node: 'node24' },
  { name: 'package', script: 'bench/package.mjs' },
  { name: 'browser-store', script: 'bench/browser-store.mjs', needs: 'browser' },
  { name: 'playground-load', script: 'bench/playground-load.mjs', needs: 'browser' },
  { name: 'native', script: 'bench/native.mjs', needs: 'native' },
];

const args = process.argv.slice(2);
const known = ['--quick', '--no-browser', '--no-native', '--only'];
for (const [i, a] of args.entries()) {
  if (!known.includes(a) && args[i - 1] !== '--only') throw new Error(`bench/run.mjs: unknown option ${a} (${known.join(' | ')})`);
}
const quick = args.includes('--quick');
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? new Set((args[onlyAt + 1] ?? '').split(',').filter(Boolean)) : null;
for (const name of only ?? []) {
  if (!SUITES.some((s) => s.name === name)) throw new Error(`bench/run.mjs: no suite "${name}" (${SUITES.map((s) => s.name).join(', ')})`);
}
const skip = new Set([args.includes('--no-browser') && 'browser', args.includes('--no-native') && 'native'].filter(Boolean));

const t0 = performance.now();
const took = [];
for (const suite of SUITES) {
  if (only ? !only.has(suite.name) : skip.has(suite.needs)) {
    console.log(`\n=== ${suite.name}: skipped`);
    continue;
  }
  const node = suite.node === 'node24' ? NODE24 : process.execPath;
  if (!existsSync(node)) throw new Error(`bench/run.mjs: ${suite.name} runs under ${node}, which is missing (./build.sh setup)`);
  const scriptArgs = [suite.script, ...(suite.args ?? []), ...(quick ? ['--quick'] : [])];
  console.log(`\n=== ${suite.name}: ${suite.node ?? 'node'} ${scriptArgs.join(' ')}`);
  const s0 = performance.now();
  execFileSync(node, scriptArgs, { cwd: ROOT, stdio: 'inherit' });
  took.push([suite.name, (performance.now() - s0) / 1000]);
}
const total = (performance.now() - t0) / 1000;
console.log(`\nbench time: ${took.map(([n, s]) => `${n} ${s.toFixed(0)} s`).join(', ')}; total ${total.toFixed(0)} s`);

const out = quick ? join(RESULTS_DIR, 'performance.quick.md') : join(ROOT, 'docs/performance.md');
const doc = ['tools/perf-doc.mjs', ...(quick ? ['--allow-quick', '--allow-missing', '--out', out] : [])];
console.log(`\n=== node ${doc.join(' ')}`);
execFileSync(process.execPath, doc, { cwd: ROOT, stdio: 'inherit' });
