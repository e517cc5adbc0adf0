// Control-flow figures, through the built package:
//  - 1,000 fanout arms, each one model round with 5 ms simulated latency: wall time against the
//    ideal (latency x arms / concurrency; goal at most 1.2x), time and peak RSS growth per arm;
//  - the cost of one `call` and one `jump`, against a plain fall-through section entry measured
//    in the same process, samples interleaved (ABC, CBA, ...).
// Prints min / median / max of each figure; writes bench/results/fanout.json.
//
//   node bench/fanout.mjs [--quick]
import { performance } from 'node:perf_hooks';
import { createEngine } from '../pkg/index.js';
import { QUICK, stats, interleaved, writeResults } from './results.mjs';

const started = performance.now();
const RUNS = QUICK ? 3 : 7;
const LATENCY = 5;
const ARMS = 1000;
const CONCURRENCY = 64;

const fmt = ({ min, median, max }, unit, digits = 2) =>
  `${median.toFixed(digits)} ${unit} (min ${min.toFixed(digits)}, max ${max.toFixed(digits)})`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const engine = await createEngine();
const model = async () => {
  await sleep(LATENCY);
  return { content: 'ok', finish_reason: 'stop' };
};

const fanoutSrc = `# F\n\n## Main\n\n\`\`\`lua\nlocal c = {}\nfor i = 1, ${ARMS} do c[i] = i end\nlocal rs = tasks.fanout('### W', c)\nreturn #rs\n\`\`\`\n\n### W\n\n\`\`\`lua\nreturn models.infer('x')\n\`\`\`\n`;

const walls = [];
// Peak memory: the process's max RSS before and after the first fanout run (it only grows), over
// the arms; it includes the wasm instance's memory growth and every arm's Lua state.
const rss0 = process.resourceUsage().maxRSS;
let rssPerArm = 0;
for (let i = 0; i < RUNS; i++) {
  const t0 = performance.now();
  const out = await engine.run(fanoutSrc, { models: { default: model }, limits: { fanoutConcurrency: CONCURRENCY } });
  walls.push(performance.now() - t0);
  if (i === 0) rssPerArm = (process.resourceUsage().maxRSS - rss0) / ARMS;
  if (out.result !== String(ARMS)) throw new Error(`fanout run failed: ${JSON.stringify(out)}`);
}
const ideal = (LATENCY * ARMS) / CONCURRENCY;
const figures = {
  wall: { name: `${ARMS.toLocaleString('en-US')} arms, one ${LATENCY} ms model round each, concurrency ${CONCURRENCY}: wall time`, unit: 'ms', ...stats(walls), runs: RUNS },
  ideal: { name: 'ideal (latency × arms / concurrency)', unit: 'ms', value: ideal },
  ratio: {
    name: 'fanout wall time / ideal', unit: '×', ...stats(walls.map((w) => w / ideal)), runs: RUNS,
    goal: { max: 1.2, of: 'median', text: '≤ 1.2× the ideal' },
  },
  perArm: { name: 'time per arm', unit: 'µs', ...stats(walls.map((w) => (w * 1000) / ARMS)) },
  rssPerArm: { name: 'peak RSS per arm (max RSS growth over the first run / arms)', unit: 'KiB', value: rssPerArm },
};
console.log(`fanout: ${ARMS} arms x one ${LATENCY} ms model round, concurrency ${CONCURRENCY}`);
console.log(`  wall time        ${fmt(figures.wall, 'ms', 1)}`);
console.log(`  ideal            ${ideal.toFixed(1)} ms (latency x arms / concurrency)`);
console.log(`  ratio to ideal   ${fmt(figures.ratio, 'x')}`);
console.log(`  time per arm     ${fmt(figures.perArm, 'µs', 0)}`);
console.log(`  peak RSS per arm ${rssPerArm.toFixed(1)} KiB (max RSS growth over the first run / arms)`);

// call and jump: N of them in one run against N plain fall-through entries; each runs a fresh
// section VM, so the per-operation figure includes the entry it runs.
const N = QUICK ? 200 : 1000;
const sections = (body) => `# C\n\n## Main\n\n\`\`\`lua\n${body}\n\`\`\`\n\n## Sub\n\n\`\`\`lua\nreturn 'x'\n\`\`\`\n`;
const callSrc = sections(`for i = 1, ${N} do call('## Sub') end\nreturn 'done'`);
const jumpSrc = `# J\n\n## A\n\n\`\`\`lua\nvar.n = (var.n or 0) + 1\nif var.n <= ${N} then jump('## B') end\nreturn 'done'\n\`\`\`\n\n## B\n\n\`\`\`lua\njump('## A')\n\`\`\`\n`;
// The baseline: N section entries by fall-through (no control flow), each a fresh VM like a call.
const plainSrc = `# P\n\n${Array.from({ length: N }, (_, i) => `## S${i}\n\n\`\`\`lua\nlocal x = ${i}\n\`\`\`\n`).join('\n')}\n## End\n\n\`\`\`lua\nreturn 'done'\n\`\`\`\n`;
const timedPer = (name, src, entries) => async () => {
  const t0 = performance.now();
  const out = await engine.run(src, { limits: { instructions: 1e9 } });
  const t = performance.now() - t0;
  if (out.result !== 'done') throw new Error(`${name} run failed: ${JSON.stringify(out)}`);
  return (t * 1000) / entries;
};
const [entry, call, jump] = await interleaved(RUNS, [
  timedPer('entry', plainSrc, N + 1),
  timedPer('call', callSrc, N + 1),
  timedPer('jump', jumpSrc, 2 * N + 1),
]);
figures.entry = { name: 'a plain section entry (fall-through)', unit: 'µs', ...stats(entry), runs: RUNS, n: N };
figures.call = { name: "`call` (its chain's one entry included)", unit: 'µs', ...stats(call), runs: RUNS, n: N };
figures.jump = { name: '`jump` (the entry it lands on included)', unit: 'µs', ...stats(jump), runs: RUNS, n: N };
console.log(`call and jump (${N} each, ${RUNS} interleaved samples; each runs a fresh section VM)`);
console.log(`  plain entry      ${fmt(figures.entry, 'µs', 0)}`);
console.log(`  call             ${fmt(figures.call, 'µs', 0)} per call (its chain's one entry included)`);
console.log(`  jump             ${fmt(figures.jump, 'µs', 0)} per jump (the entry it jumps to included)`);
writeResults('fanout', 'node bench/fanout.mjs', figures, started);
