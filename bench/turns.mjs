// Responsiveness under a busy block: while a block runs with the budget lifted, a 1 ms interval
// timer records the gaps between its ticks (the longest gap is the longest time the host's event
// loop waited for a turn), and an abort() fired after 200 ms measures how long the run takes to
// end Cancelled. One row per kind of work: plain Lua, pattern matching, table.sort, pcall(error).
//
// Writes bench/results/turns.json.
//
//   node bench/turns.mjs [--quick] [--runs N]    (against the current pkg/)
import { performance } from 'node:perf_hooks';
import { QUICK, isMain, stats, writeResults } from './results.mjs';

export const WORKLOADS = {
  'Lua loop': 'local n = 0 while true do n = n + 1 end',
  'string.find .-b (2 KB)': 'local s = ("a"):rep(2000) while true do s:find(".-b") end',
  'table.sort 100k': 'local t = {} for i = 1, 100000 do t[i] = (i * 7919) % 100003 end while true do table.sort(t) end',
  'pcall(error, {})': 'while true do pcall(error, {}) end',
};

async function once(engine, lua) {
  const gaps = [];
  let last = performance.now();
  const tick = setInterval(() => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
  }, 1);
  const controller = new AbortController();
  let abortedAt = 0;
  setTimeout(() => {
    abortedAt = performance.now();
    controller.abort();
  }, 200);
  const o = await engine.run(`# T\n\n## Main\n\n\`\`\`lua\n${lua}\n\`\`\`\n`, { signal: controller.signal, limits: { instructions: 1e15 } });
  const latency = performance.now() - abortedAt;
  clearInterval(tick);
  if (o.ok || o.error.kind !== 'Cancelled') throw new Error(`expected Cancelled, got ${JSON.stringify(o)}`);
  return { maxGap: Math.max(...gaps), latency };
}

export async function runTurns({ runs = 5, createEngine } = {}) {
  if (!createEngine) ({ createEngine } = await import('../pkg/index.js'));
  const engine = await createEngine();
  const out = {};
  for (const [name, lua] of Object.entries(WORKLOADS)) {
    const maxGaps = [];
    const latencies = [];
    for (let i = 0; i < runs; i++) {
      const r = await once(engine, lua);
      maxGaps.push(r.maxGap);
      latencies.push(r.latency);
    }
    out[name] = { longestGapMs: stats(maxGaps), abortLatencyMs: stats(latencies) };
  }
  return out;
}

export function printTurns(results) {
  console.log('\nbusy block, budget lifted (ms: min / median / max over runs):');
  console.log(`  ${'work'.padEnd(24)} ${'longest event-loop wait'.padStart(26)}   ${'abort() to Cancelled'.padStart(24)}`);
  const cell = (s) => `${s.min.toFixed(1).padStart(7)} ${s.median.toFixed(1).padStart(7)} ${s.max.toFixed(1).padStart(7)}`;
  for (const [name, r] of Object.entries(results)) {
    console.log(`  ${name.padEnd(24)} ${cell(r.longestGapMs).padStart(26)}   ${cell(r.abortLatencyMs).padStart(24)}`);
  }
}

if (isMain(import.meta.url)) {
  const started = performance.now();
  const i = process.argv.indexOf('--runs');
  const runs = i > 0 ? Number(process.argv[i + 1]) : QUICK ? 3 : 5;
  const r = await runTurns({ runs });
  printTurns(r);
  const figures = {};
  Object.entries(r).forEach(([name, t], k) => {
    figures[`gap${k}`] = { name: `${name}: longest wait of the event loop`, unit: 'ms', ...t.longestGapMs, work: name, runs };
    figures[`abort${k}`] = { name: `${name}: abort() to Cancelled`, unit: 'ms', ...t.abortLatencyMs, work: name, runs };
  });
  writeResults('turns', i > 0 ? `node bench/turns.mjs --runs ${runs}` : 'node bench/turns.mjs', figures, started);
}
