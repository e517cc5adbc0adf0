// Builds compared on the fanout of bench/fanout.mjs (1,000 arms, one 5 ms model round each,
// concurrency 64): several Runvil packages (copies of pkg/ from different builds) and the AI SDK 7
// `generateText` pool in one process, samples interleaved in rotating order (ABC, BCA, CAB, ...)
// after one unmeasured warm-up each. For each: CPU µs per arm (user + system, this process) and
// wall time, median (min, max), and the ratio of the medians to the pool's. Not part of
// `bench/run.mjs` (it compares builds: fanout.mjs is the figure for the docs). Needs Node >= 22.
//
//   cp -r pkg /tmp/pkg-a; (change, ./build.sh build)
//   tools/node24/node_modules/node24/bin/node bench/fanout-ab.mjs 9 /tmp/pkg-a pkg
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { stats } from './results.mjs';
import { ARMS, CONCURRENCY, LATENCY, fanoutSrc as src, makeSdkPool, model } from './fanout-workload.mjs';

const [runsArg, ...pkgs] = process.argv.slice(2);
const runs = Number(runsArg);
if (!Number.isInteger(runs) || runs < 1 || pkgs.length === 0) {
  console.error('usage: node bench/fanout-ab.mjs RUNS PKG_DIR [PKG_DIR ...]');
  process.exit(2);
}

/** CPU µs per arm and wall ms of one sample. */
const sample = async (fn) => {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / ARMS, wall };
};

const arms = [];
for (const dir of pkgs) {
  const { createEngine } = await import(pathToFileURL(resolve(dir, 'index.js')).href);
  const engine = await createEngine();
  arms.push({
    name: dir,
    run: () =>
      sample(async () => {
        const out = await engine.run(src, { models: { default: model }, limits: { fanoutConcurrency: CONCURRENCY } });
        if (out.result !== String(ARMS)) throw new Error(`${dir}: the fanout failed: ${JSON.stringify(out)}`);
      }),
  });
}
const sdkPool = await makeSdkPool();
arms.push({ name: `AI SDK 7 pool (${CONCURRENCY} wide)`, run: () => sample(sdkPool) });

for (const arm of arms) await arm.run(); // warm-up
const samples = arms.map(() => []);
for (let i = 0; i < runs; i++) {
  for (let k = 0; k < arms.length; k++) {
    const j = (k + i) % arms.length;
    samples[j].push(await arms[j].run());
  }
}
const pool = samples[arms.length - 1];
const poolCpu = stats(pool.map((s) => s.cpu)).median;
const poolWall = stats(pool.map((s) => s.wall)).median;
console.log(
  `fanout, ${ARMS} arms x one ${LATENCY} ms round, concurrency ${CONCURRENCY}; ${runs} interleaved samples: median (min, max); median / the pool's`,
);
arms.forEach((arm, j) => {
  const cpu = stats(samples[j].map((s) => s.cpu));
  const wall = stats(samples[j].map((s) => s.wall));
  console.log(
    `  ${arm.name.padEnd(28)} CPU ${cpu.median.toFixed(0)} µs/arm (${cpu.min.toFixed(0)}, ${cpu.max.toFixed(0)}) ${(cpu.median / poolCpu).toFixed(2)}x` +
      `   wall ${wall.median.toFixed(0)} ms (${wall.min.toFixed(0)}, ${wall.max.toFixed(0)}) ${(wall.median / poolWall).toFixed(2)}x`,
  );
});
