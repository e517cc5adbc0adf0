// The cost of journaling: time per model round of a 200-round prompt (models.infer in a loop, an
// instant model), with no journal, with `record: true` (the journal kept in memory) and with a
// durable log as `runvil run --journal` keeps it (each entry appended to a file and fdatasynced
// before the answer goes on). Samples interleaved (ABC, CBA, ...; one unmeasured warm-up each).
// Per-round time = run time / rounds.
//
// Writes bench/results/journal.json.
//
//   node bench/journal.mjs [--quick]      (against the current pkg/)
import { performance } from 'node:perf_hooks';
import { mkdtempSync, openSync, writeSync, fdatasyncSync, closeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QUICK, stats, interleaved, writeResults } from './results.mjs';

const started = performance.now();
const ROUNDS = 200;
const RUNS = QUICK ? 3 : 11;
const { createEngine } = await import('../pkg/index.js');
const engine = await createEngine();
const dir = mkdtempSync(join(tmpdir(), 'runvil-bench-journal-'));

const prompt = `# Rounds\n\n## Main\n\n\`\`\`lua\nlocal n = 0\nfor i = 1, ${ROUNDS} do\n  n = n + #models.infer('round ' .. i)\nend\nreturn tostring(n)\n\`\`\`\n`;
const model = async () => ({ content: 'ok' });

const handles = [];
const timed = (options) => async () => {
  const t0 = performance.now();
  const outcome = await engine.run(prompt, { models: { default: model }, seed: 1, ...(await options()) });
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.error));
  const us = ((performance.now() - t0) * 1000) / ROUNDS; // µs per round
  while (handles.length) await handles.pop().close();
  return us;
};

let logs = 0;
const [none, memory, durable] = await interleaved(RUNS, [
  timed(async () => ({})),
  timed(async () => ({ record: true })),
  timed(async () => {
    const handle = await open(join(dir, `run-${logs++}.jsonl`), 'a');
    handles.push(handle);
    return {
      record: async (entry) => {
        await handle.write(`${JSON.stringify(entry)}\n`);
        await handle.datasync();
      },
    };
  }),
]);

// The disk's own fdatasync cost on this machine, for reading the durable figure.
const fd = openSync(join(dir, 'sync.bin'), 'a');
const syncs = [];
for (let i = 0; i < 200; i++) {
  const t0 = performance.now();
  writeSync(fd, 'x\n');
  fdatasyncSync(fd);
  syncs.push((performance.now() - t0) * 1000);
}
closeSync(fd);

const figure = (name, samples) => ({ name, unit: 'µs per model round', ...stats(samples) });
const figures = {
  none: figure(`${ROUNDS}-round run, no journal`, none),
  memory: figure(`${ROUNDS}-round run, record: true`, memory),
  durable: figure(`${ROUNDS}-round run, each entry appended and fdatasynced (runvil run --journal)`, durable),
  fdatasync: { name: 'one append + fdatasync of the same disk, alone', unit: 'µs', ...stats(syncs) },
};
for (const [id, f] of Object.entries(figures)) console.log(`${id.padEnd(10)} ${f.min.toFixed(0)} / ${f.median.toFixed(0)} / ${f.max.toFixed(0)} ${f.unit}`);
writeResults('journal', 'node bench/journal.mjs', figures, started);
