// The cost of journaling in workerd (from npm): time per model round of a 200-round prompt
// (models.infer in a loop, an instant model) run in a Worker with no journal, with `record: true`,
// and as a RunvilRunObject run (each journal entry put to Durable Object storage, on local disk,
// before its answer goes on: docs/durable.md). Each sample is one request timed from this process
// (workerd's own clocks stand still while a request computes); samples interleaved (ABC, CBA, ...;
// one unmeasured warm-up each). Per-round time = request time / rounds.
//
// Writes bench/results/journal-workerd.json.
//
//   node bench/journal-workerd.mjs [--quick]      (against the current pkg/)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startWorkerd, writeWorkerdConfig } from '../pkg-tests/helpers.mjs';
import { QUICK, ROOT, stats, interleaved, writeResults } from './results.mjs';

const started = performance.now();
const ROUNDS = 200;
const RUNS = QUICK ? 3 : 11;
const WORKER = join(ROOT, 'bench/workerd/journal-worker.js');

const prompt = `# Rounds\n\n## Main\n\n\`\`\`lua\nlocal n = 0\nfor i = 1, ${ROUNDS} do\n  n = n + #models.infer('round ' .. i)\nend\nreturn tostring(n)\n\`\`\`\n`;

const dir = mkdtempSync(join(tmpdir(), 'runvil-bench-journal-workerd-'));
const config = writeWorkerdConfig(dir, {
  name: 'bench',
  modules: { 'worker.js': WORKER },
  durableObjects: { RUNS: 'BenchRunObject', RUNVIL_STORE: 'RunvilStoreObject' },
});

const server = await startWorkerd(config).catch((error) => {
  rmSync(dir, { recursive: true, force: true });
  throw error;
});
const base = server.url;

try {
  let runs = 0;
  const timed = (path) => async () => {
    const url = path === '/durable' ? `${base}/durable?id=bench-${runs++}` : `${base}${path}`;
    const t0 = performance.now();
    const response = await fetch(url, { method: 'POST', body: prompt });
    const answer = JSON.parse(await response.text());
    const us = ((performance.now() - t0) * 1000) / ROUNDS;
    if (!answer.ok || answer.result !== String(2 * ROUNDS)) throw new Error(`${path}: ${JSON.stringify(answer)}\n${server.log()}`);
    return us;
  };
  const [plain, memory, durable] = await interleaved(RUNS, [timed('/plain'), timed('/record'), timed('/durable')]);
  const figure = (name, samples) => ({ name, unit: 'µs per model round', ...stats(samples) });
  const figures = {
    none: figure(`${ROUNDS}-round run in a Worker, no journal`, plain),
    memory: figure(`${ROUNDS}-round run in a Worker, record: true`, memory),
    durable: figure(`${ROUNDS}-round RunvilRunObject run, each entry put to Durable Object storage`, durable),
  };
  for (const [id, f] of Object.entries(figures)) {
    console.log(`${id.padEnd(8)} ${f.min.toFixed(0)} / ${f.median.toFixed(0)} / ${f.max.toFixed(0)} ${f.unit}`);
  }
  writeResults('journal-workerd', 'node bench/journal-workerd.mjs', figures, started);
} finally {
  await server.kill();
  rmSync(dir, { recursive: true, force: true });
}
