// Control-flow figures, through the built package:
//  - 1,000 fanout arms, each one model round with 5 ms simulated latency: wall time against the
//    ideal (latency x arms / concurrency; goal at most 1.2x), time, CPU time and peak RSS growth
//    per arm;
//  - the same 1,000 rounds as AI SDK 7 `generateText` calls (MockLanguageModelV4, same latency) in
//    a 64-wide promise pool, the peer a host would otherwise write, samples interleaved with the
//    fanout's (AB, BA, ...; goal: the fanout at most 1.0x the pool). AI SDK 7 needs Node >= 22, so
//    bench/run.mjs runs this suite under the Node 24 that setup installs;
//  - the cost of one `call` and one `jump`, against a plain fall-through section entry measured
//    in the same process, samples interleaved (ABC, CBA, ...).
// Prints min / median / max of each figure; writes bench/results/fanout.json.
//
//   node bench/fanout.mjs [--quick]
import { performance } from 'node:perf_hooks';
import { createEngine } from '../pkg/index.js';
import { QUICK, stats, interleaved, versus, writeResults } from './results.mjs';
import { ARMS, CONCURRENCY, LATENCY, fanoutSrc, makeSdkPool, model } from './fanout-workload.mjs';

const started = performance.now();
const RUNS = QUICK ? 3 : 7;

const fmt = ({ min, median, max }, unit, digits = 2) =>
  `${median.toFixed(digits)} ${unit} (min ${min.toFixed(digits)}, max ${max.toFixed(digits)})`;

const engine = await createEngine();
const sdkPool = await makeSdkPool();

/** Wall time and CPU time (user + system, this process) of one sample. */
const timed = (fn) => async () => {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  return { wall, cpuMs: (cpu.user + cpu.system) / 1000 };
};

// Peak memory: the process's max RSS before and after the first fanout run (it only grows), over
// the arms; it includes the wasm instance's memory growth and every arm's Lua state. Taken before
// the interleaved samples, so the peer's allocations are not counted.
const runFanout = async () => {
  const out = await engine.run(fanoutSrc, { models: { default: model }, limits: { fanoutConcurrency: CONCURRENCY } });
  if (out.result !== String(ARMS)) throw new Error(`fanout run failed: ${JSON.stringify(out)}`);
};
const rss0 = process.resourceUsage().maxRSS;
await runFanout();
const rssPerArm = (process.resourceUsage().maxRSS - rss0) / ARMS;
const [fanoutSamples, sdkSamples] = await interleaved(RUNS, [timed(runFanout), timed(sdkPool)]);
const walls = fanoutSamples.map((s) => s.wall);
const sdkWalls = sdkSamples.map((s) => s.wall);
const ideal = (LATENCY * ARMS) / CONCURRENCY;
const figures = {
  wall: { name: `${ARMS.toLocaleString('en-US')} arms, one ${LATENCY} ms model round each, concurrency ${CONCURRENCY}: wall time`, unit: 'ms', ...stats(walls), runs: RUNS },
  ideal: { name: 'ideal (latency × arms / concurrency)', unit: 'ms', value: ideal },
  ratio: {
    name: 'fanout wall time / ideal', unit: '×', ...stats(walls.map((w) => w / ideal)), runs: RUNS,
    goal: { max: 1.2, of: 'median', text: '≤ 1.2× the ideal' },
  },
  perArm: { name: 'time per arm', unit: 'µs', ...stats(walls.map((w) => (w * 1000) / ARMS)) },
  cpuPerArm: {
    name: 'CPU time per arm (user + system)', unit: 'µs', ...stats(fanoutSamples.map((s) => (s.cpuMs * 1000) / ARMS)),
    peer: { name: 'AI SDK 7 pool, CPU time per call', ...stats(sdkSamples.map((s) => (s.cpuMs * 1000) / ARMS)) },
  },
  versusSdk: versus(`fanout wall time / AI SDK 7 \`generateText\` pool (${CONCURRENCY} wide), interleaved`, 'ms', walls,
    'AI SDK 7 promise pool', sdkWalls, { max: 1.0, of: 'ratio', text: '≤ 1.0× the AI SDK pool' }),
  rssPerArm: { name: 'peak RSS per arm (max RSS growth over the first run / arms)', unit: 'KiB', value: rssPerArm },
};
console.log(`fanout: ${ARMS} arms x one ${LATENCY} ms model round, concurrency ${CONCURRENCY}`);
console.log(`  wall time        ${fmt(figures.wall, 'ms', 1)}`);
console.log(`  ideal            ${ideal.toFixed(1)} ms (latency x arms / concurrency)`);
console.log(`  ratio to ideal   ${fmt(figures.ratio, 'x')}`);
console.log(`  time per arm     ${fmt(figures.perArm, 'µs', 0)}`);
console.log(`  CPU per arm      ${fmt(figures.cpuPerArm, 'µs', 0)}; AI SDK ${fmt(figures.cpuPerArm.peer, 'µs', 0)} per call`);
console.log(`  AI SDK 7 pool    ${fmt(figures.versusSdk.peer, 'ms', 1)}; fanout / pool ${figures.versusSdk.ratio.toFixed(2)}x`);
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
