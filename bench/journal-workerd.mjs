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
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort, writeWorkerdConfig } from '../pkg-tests/helpers.mjs';
import { QUICK, ROOT, stats, interleaved, writeResults } from './results.mjs';

const started = performance.now();
const ROUNDS = 200;
const RUNS = QUICK ? 3 : 11;
const WORKER = join(ROOT, 'bench/workerd/journal-worker.js');
const WORKERD = join(ROOT, 'node_modules/.bin/workerd');

const prompt = `# Rounds\n\n## Main\n\n\`\`\`lua\nlocal n = 0\nfor i = 1, ${ROUNDS} do\n  n = n + #models.infer('round ' .. i)\nend\nreturn tostring(n)\n\`\`\`\n`;

const dir = mkdtempSync(join(tmpdir(), 'runvil-bench-journal-workerd-'));
const config = writeWorkerdConfig(dir, {
  name: 'bench',
  modules: { 'worker.js': WORKER },
  durableObjects: { RUNS: 'BenchRunObject', RUNVIL_STORE: 'RunvilStoreObject' },
});

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const child = spawn(WORKERD, ['serve', config, '--socket-addr', `http=${base.slice(7)}`], {
  cwd: dir,
  stdio: ['ignore', 'pipe', 'pipe'],
  detached: true,
});
let output = '';
child.stdout.on('data', (d) => (output += d));
child.stderr.on('data', (d) => (output += d));
const stop = () => {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
  rmSync(dir, { recursive: true, force: true });
};

try {
  for (const deadline = Date.now() + 60_000; ; ) {
    if (child.exitCode !== null) throw new Error(`workerd exited with ${child.exitCode}:\n${output}`);
    try {
      const probe = await fetch(`${base}/`);
      await probe.text();
      if (probe.status === 404) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`workerd did not answer in 60 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  let runs = 0;
  const timed = (path) => async () => {
    const url = path === '/durable' ? `${base}/durable?id=bench-${runs++}` : `${base}${path}`;
    const t0 = performance.now();
    const response = await fetch(url, { method: 'POST', body: prompt });
    const answer = JSON.parse(await response.text());
    const us = ((performance.now() - t0) * 1000) / ROUNDS;
    if (!answer.ok || answer.result !== String(2 * ROUNDS)) throw new Error(`${path}: ${JSON.stringify(answer)}\n${output}`);
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
  stop();
}
