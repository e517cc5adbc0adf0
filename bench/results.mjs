// What every bench script shares: sample statistics, the machine stamp, and the machine-readable
// results file each script writes into bench/results/<suite>.json, which tools/perf-doc.mjs turns
// into the tables of docs/performance.md.
//
// A results file:
//   { suite, command, quick, date, node, cpu, cores, os, durationMs, figures: { id: Figure } }
// A Figure (all times in its `unit`):
//   { name, unit,
//     min, median, max, samples?          the measured side (Runvil unless the name says otherwise)
//     value?                              a derived scalar instead of min/median/max (a ratio, a count)
//     peer?: { name, min, median, max, samples? }   the same work by the peer, in the same run
//     ratio?: number                      median / peer median (or what `ratioOf` says)
//     ratioOf?: string                    how `ratio` was formed when not the ratio of medians
//     goal?: { max: number, of: 'ratio' | 'median' | 'value', text: string }  met when figure[of] <= max
//     ...extra fields a table needs (checksum, native, runs) }
// The goal is data, never a verdict: the generator computes met / not met from it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, release, platform, arch } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const RESULTS_DIR = join(ROOT, 'bench/results');
export const QUICK = process.argv.includes('--quick');

/** min / median / max of the samples, and the samples themselves (in the order taken). */
export function stats(xs) {
  if (!xs.length || xs.some((x) => !Number.isFinite(x))) throw new Error(`bad samples: ${JSON.stringify(xs)}`);
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return { min: s[0], median: s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2, max: s[s.length - 1], samples: xs };
}

export const geomean = (xs) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

/** A figure of samples against a peer's samples taken in the same run; ratio of the medians. */
export function versus(name, unit, mine, peerName, theirs, goal) {
  const a = stats(mine);
  const b = stats(theirs);
  return { name, unit, ...a, peer: { name: peerName, ...b }, ratio: a.median / b.median, ...(goal && { goal }) };
}

/** The machine and the moment: stamped on every results file. */
export function environment() {
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpu: cpus()[0]?.model?.trim() ?? 'unknown',
    cores: cpus().length,
    os: `${platform()} ${release()} ${arch()}`,
  };
}

/** True when the module at `url` is the script node was started with. */
export const isMain = (url) => process.argv[1] === fileURLToPath(url);

/**
 * Writes bench/results/<suite>.json. `command` is what reproduces it (relative to the repo root);
 * `started` the performance.now() at the script's start.
 */
export function writeResults(suite, command, figures, started) {
  for (const [id, f] of Object.entries(figures)) {
    if (typeof f.name !== 'string' || typeof f.unit !== 'string') throw new Error(`${suite}.${id}: a figure needs a name and a unit`);
    if (f.value === undefined && f.median === undefined) throw new Error(`${suite}.${id}: a figure needs a median or a value`);
  }
  const out = {
    suite,
    command: QUICK ? `${command} --quick` : command,
    quick: QUICK,
    ...environment(),
    durationMs: Math.round(performance.now() - started),
    figures,
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${suite}.json`);
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`written: ${relative(ROOT, file)}`);
  return out;
}

/** Interleaved samples of several workloads: ABC, CBA, ABC, ... after one unmeasured warm-up each. */
export async function interleaved(runs, fns) {
  for (const fn of fns) await fn();
  const out = fns.map(() => []);
  for (let i = 0; i < runs; i++) {
    const order = fns.map((_, k) => k);
    if (i % 2) order.reverse();
    for (const k of order) out[k].push(await fns[k]());
  }
  return out;
}
