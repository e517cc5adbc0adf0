// What a large payload crossing the wasm bridge costs in memory: for each way text enters a run
// (a model reply's tool-call argument, a Pack tool's result, a store file read through `read()`,
// a store file `open()` handed over with the listing, a model's text reply), payloads of 1, 10 and 50 MiB, under the default memory ceiling (64 MiB) and under
// `limits.memoryBytes` of 256 MiB. Each sample runs in a fresh Node process: a wasm memory never
// shrinks and V8 keeps what it has allocated, so one run would colour the next. Reported per
// sample: how far the wasm memory grew (the largest an engine instance reached by the end of the
// run, `Symbol.for('runvil.memory')`, less its size before the run), the process RSS growth, and
// the run's outcome (`ok`, or the error kind). Cases are interleaved (the whole matrix once, then
// again), min / median / max over the samples. Writes bench/results/bridge-memory.json.
//
//   node bench/bridge-memory.mjs [--quick] [--runs N] [--only case,case] [--sizes 1,10]
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { ROOT, QUICK, stats, writeResults } from './results.mjs';

const MiB = 2 ** 20;
const started = performance.now();
const argv = process.argv.slice(2);
const opt = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const RUNS = Number(opt('--runs', QUICK ? 1 : 3));
const CASES = opt('--only', 'toolArg,toolResult,storeRead,storeOpen,modelText').split(',');
const SIZES = opt('--sizes', '1,10,50').split(',').map(Number);
const CEILINGS = [
  { name: 'default', limits: undefined },
  { name: '256 MiB', limits: { memoryBytes: 256 * MiB } },
];

/** The child: one run of `kind` with a payload of `bytes`, answering its figures as JSON. */
const child = (kind, bytes, limits) => `
  const { createEngine, memoryStore } = await import('./pkg/index.js');
  const kind = ${JSON.stringify(kind)};
  const payload = 'x'.repeat(${bytes});
  const lua = (body, front = '') => '---\\nmax_tool_iterations: 4\\n' + front + '---\\n# B\\n\\n## Main\\n\\n\\u0060\\u0060\\u0060lua\\n' + body + '\\n\\u0060\\u0060\\u0060\\n';
  let rounds = 0;
  const cases = {
    toolArg: () => ({
      source: lua("tools.offer_local('grab', 'Grab', { value = 'string' }, function(args) return tostring(#args.value) end)\\nmessages:user('go')\\nreturn models.loop()"),
      options: { models: { default: async () => (rounds++ === 0
        ? { content: '', tool_calls: [{ id: 'c1', name: 'grab', arguments: { value: payload } }], finish_reason: 'tool_calls' }
        : { content: 'done', finish_reason: 'stop' }) } },
    }),
    toolResult: () => ({
      source: lua("return tostring(#tools.call('bench/big', {}))", 'uses: [bench]\\n'),
      options: { packs: [{ name: 'bench', description: 'bench', tools: [{ name: 'big', description: 'big', parameters: { type: 'object', properties: {} }, trust: 'trusted', call: async () => payload }] }] },
    }),
    storeRead: () => {
      // A store that lists the file without its data, so the engine asks read() for it.
      const inner = memoryStore({ 'big.txt': payload });
      return {
        source: lua("return tostring(#store.read('big.txt'))"),
        options: { store: { open: async () => ({ files: [{ path: 'big.txt' }] }), read: (path) => inner.read(path), commit: (changes) => inner.commit(changes) } },
      };
    },
    storeOpen: () => ({
      // memoryStore hands its files' data to open().
      source: lua("return tostring(#store.read('big.txt'))"),
      options: { store: memoryStore({ 'big.txt': payload }) },
    }),
    modelText: () => ({
      source: lua("return tostring(#models.infer('x'))"),
      options: { models: { default: async () => ({ content: payload, finish_reason: 'stop' }) } },
    }),
  };
  const { source, options } = cases[kind]();
  const engine = await createEngine();
  const memory = engine[Symbol.for('runvil.memory')];
  const wasm0 = memory();
  const rss0 = process.memoryUsage().rss;
  const out = await engine.run(source, { ...options, limits: ${JSON.stringify(limits)} });
  const rss = process.memoryUsage().rss - rss0;
  const outcome = out.ok ? (out.result === String(payload.length) || out.result === 'done' ? 'ok' : 'wrong result ' + String(out.result).slice(0, 80)) : out.error.kind;
  console.log(JSON.stringify({ wasm: memory() - wasm0, rss, outcome, message: out.ok ? undefined : out.error.message }));`;

function sample(kind, mib, ceiling) {
  const text = execFileSync(process.execPath, ['--input-type=module', '-e', child(kind, mib * MiB, ceiling.limits)], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  return JSON.parse(text.trim().split('\n').pop());
}

const cells = [];
for (const kind of CASES) for (const mib of SIZES) for (const ceiling of CEILINGS) cells.push({ kind, mib, ceiling, samples: [] });
for (let r = 0; r < RUNS; r++) {
  for (const cell of r % 2 ? [...cells].reverse() : cells) {
    const s = sample(cell.kind, cell.mib, cell.ceiling);
    cell.samples.push(s);
    console.log(`${cell.kind} ${cell.mib} MiB, ceiling ${cell.ceiling.name}: wasm +${(s.wasm / MiB).toFixed(1)} MiB, rss +${(s.rss / MiB).toFixed(1)} MiB, ${s.outcome}${s.message ? ` (${s.message.slice(0, 120)})` : ''}`);
  }
}

const figures = {};
const rows = ['| payload | size | ceiling | outcome | wasm growth (MiB, min / median / max) | × payload | RSS growth (MiB, median) |', '|---|---|---|---|---|---|---|'];
for (const { kind, mib, ceiling, samples } of cells) {
  const wasm = stats(samples.map((s) => s.wasm / MiB));
  const rss = stats(samples.map((s) => s.rss / MiB));
  const outcomes = [...new Set(samples.map((s) => s.outcome))].join(' / ');
  const id = `${kind}-${mib}-${ceiling.name.replace(/\W+/g, '')}`;
  figures[`${id}-wasm`] = { name: `${kind} ${mib} MiB, ceiling ${ceiling.name}: wasm memory growth (${outcomes})`, unit: 'MiB', ...wasm };
  figures[`${id}-rss`] = { name: `${kind} ${mib} MiB, ceiling ${ceiling.name}: RSS growth`, unit: 'MiB', ...rss };
  const f = (x) => x.toFixed(1);
  rows.push(`| ${kind} | ${mib} MiB | ${ceiling.name} | ${outcomes} | ${f(wasm.min)} / ${f(wasm.median)} / ${f(wasm.max)} | ${(wasm.median / mib).toFixed(2)} | ${f(rss.median)} |`);
}
console.log(`\n${rows.join('\n')}\n`);
writeResults('bridge-memory', 'node bench/bridge-memory.mjs', figures, started);
