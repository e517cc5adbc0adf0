// Control-flow figures (issue 8), through the built package:
//  - 1,000 fanout arms, each one model round with 5 ms simulated latency: wall time against the
//    ideal (latency x arms / concurrency), time and heap growth per arm;
//  - the cost of one `call` and one `jump`, against a plain fall-through section entry measured
//    in the same process, samples interleaved (ABAB).
// Prints min / median / max of each figure.
//
//   node bench/fanout.mjs [--quick]
import { performance } from 'node:perf_hooks';
import { createEngine } from '../pkg/index.js';

const QUICK = process.argv.includes('--quick');
const RUNS = QUICK ? 3 : 7;
const LATENCY = 5;
const ARMS = 1000;
const CONCURRENCY = 64;

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return { min: s[0], median: s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2, max: s[s.length - 1] };
};
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
const wall = stats(walls);
console.log(`fanout: ${ARMS} arms x one ${LATENCY} ms model round, concurrency ${CONCURRENCY}`);
console.log(`  wall time        ${fmt(wall, 'ms', 1)}`);
console.log(`  ideal            ${ideal.toFixed(1)} ms (latency x arms / concurrency)`);
console.log(`  ratio to ideal   ${fmt(stats(walls.map((w) => w / ideal)), 'x')}`);
console.log(`  time per arm     ${fmt(stats(walls.map((w) => (w * 1000) / ARMS)), 'µs', 0)}`);
console.log(`  peak RSS per arm ${rssPerArm.toFixed(1)} KiB (max RSS growth over the first run / arms)`);

// call and jump: N of them in one run against N plain fall-through entries; per-operation cost
// is the difference over N.
const N = QUICK ? 200 : 1000;
const sections = (body) => `# C\n\n## Main\n\n\`\`\`lua\n${body}\n\`\`\`\n\n## Sub\n\n\`\`\`lua\nreturn 'x'\n\`\`\`\n`;
const callSrc = sections(`for i = 1, ${N} do call('## Sub') end\nreturn 'done'`);
const jumpSrc = `# J\n\n## A\n\n\`\`\`lua\nvar.n = (var.n or 0) + 1\nif var.n <= ${N} then jump('## B') end\nreturn 'done'\n\`\`\`\n\n## B\n\n\`\`\`lua\njump('## A')\n\`\`\`\n`;
// The baseline: N section entries by fall-through (no control flow), each a fresh VM like a call.
const plainSrc = `# P\n\n${Array.from({ length: N }, (_, i) => `## S${i}\n\n\`\`\`lua\nlocal x = ${i}\n\`\`\`\n`).join('\n')}\n## End\n\n\`\`\`lua\nreturn 'done'\n\`\`\`\n`;
const per = { call: [], jump: [], entry: [] };
for (let i = 0; i < RUNS; i++) {
  for (const [name, src, entries] of [['entry', plainSrc, N + 1], ['call', callSrc, N + 1], ['jump', jumpSrc, 2 * N + 1]]) {
    const t0 = performance.now();
    const out = await engine.run(src, { limits: { instructions: 1e9 } });
    const t = performance.now() - t0;
    if (out.result !== 'done') throw new Error(`${name} run failed: ${JSON.stringify(out)}`);
    per[name].push((t * 1000) / entries);
  }
}
console.log(`call and jump (${N} each, ${RUNS} interleaved samples; each runs a fresh section VM)`);
console.log(`  plain entry      ${fmt(stats(per.entry), 'µs', 0)}`);
console.log(`  call             ${fmt(stats(per.call), 'µs', 0)} per call (its chain's one entry included)`);
console.log(`  jump             ${fmt(stats(per.jump), 'µs', 0)} per jump (the entry it jumps to included)`);
