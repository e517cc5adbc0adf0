// Compares builds (copies of pkg/) on start-up, with wasmoon: each sample a fresh Node process, the
// packages and wasmoon rotating (ABC, CBA, ...), so a before/after pair shares the machine's state.
// Prints, per package and for wasmoon: import, createEngine, the first trivial run, the same run
// again, createEngine + first run, the RSS one engine adds and the part of it createEngine added,
// min / median / max; then each package's sum and RSS over wasmoon's
// (ratios of the medians). Writes nothing.
//
//   node bench/startup-ab.mjs RUNS PKG_DIR...
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, stats } from './results.mjs';
import { runvilChild, wasmoonChild } from './startup-child.mjs';

const [runsArg, ...dirs] = process.argv.slice(2);
const runs = Number(runsArg);
if (!Number.isInteger(runs) || runs < 1 || dirs.length === 0) {
  console.error('usage: node bench/startup-ab.mjs RUNS PKG_DIR...');
  process.exit(2);
}

const arms = [
  ...dirs.map((dir) => ({ name: dir, child: runvilChild(pathToFileURL(`${resolve(dir)}/index.js`).href, 'undefined') })),
  { name: 'wasmoon', child: wasmoonChild("return 'ok'", 'ok') },
];
const samples = new Map(arms.map((arm) => [arm.name, []]));
for (let i = 0; i < runs; i++) {
  for (const arm of i % 2 === 0 ? arms : [...arms].reverse()) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', arm.child], { cwd: ROOT, encoding: 'utf8' });
    const s = JSON.parse(out);
    samples.get(arm.name).push({ ...s, sum: s.create + s.first, rss: s.rss / 2 ** 20, rssCreate: s.rssCreate / 2 ** 20 });
  }
}

const KEYS = [
  ['import', 'ms'],
  ['create', 'ms'],
  ['first', 'ms'],
  ['second', 'ms'],
  ['sum', 'ms'],
  ['rss', 'MiB'],
  ['rssCreate', 'MiB'],
];
const cell = (xs, digits = 1) => {
  const { min, median, max } = stats(xs);
  return `${median.toFixed(digits)} (${min.toFixed(digits)}–${max.toFixed(digits)})`;
};
const median = (name, key) => stats(samples.get(name).map((s) => s[key])).median;
console.log(`start-up, ${runs} fresh processes per arm, rotating; median (min–max)`);
for (const arm of arms) {
  const of = (key) => samples.get(arm.name).map((s) => s[key]);
  console.log(`  ${arm.name}`);
  for (const [key, unit] of KEYS) console.log(`    ${key.padEnd(9)} ${cell(of(key))} ${unit}`);
}
for (const dir of dirs) {
  const ratio = (key) => (median(dir, key) / median('wasmoon', key)).toFixed(2);
  console.log(`  ${dir} / wasmoon: sum ${ratio('sum')}x, RSS ${ratio('rss')}x`);
}
