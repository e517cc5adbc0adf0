// What crosses the bridge is measured against the memory ceiling before it is copied into wasm
// memory (js/core/crossing.js, docs/reliability.md "Memory at the edge"): an answer the ceiling
// cannot hold ends the run with the memory ceiling's Limit error and leaves the instance's memory
// as it was; one within it costs at most three times its size in wasm memory, plus a fixed slack.
// The bounds are correctness properties with wide margins, not speed claims.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { createEngine, memoryStore } from '../pkg/index.js';
import { ROOT, WORKERD, luaPrompt, serveWorkerd, tempDir, writeWorkerdConfig } from './helpers.mjs';

const MiB = 2 ** 20;
/** What a run's own work (the VM, its first blocks) may grow the memory by, beyond the payload. */
const SLACK = 8 * MiB;

const pack = (payload) => ({
  name: 'big',
  description: 'big answers',
  tools: [{ name: 'get', description: 'a big answer', parameters: { type: 'object', properties: {} }, trust: 'trusted', call: async () => payload }],
});

/** A store that lists its files without their data, so the engine must read() each; `reads` lists what it asked. */
function listingOnly(files) {
  const inner = memoryStore(files);
  const reads = [];
  return {
    reads,
    open: async () => ({ files: Object.keys(files).map((path) => ({ path })) }),
    read: async (path) => {
      reads.push(path);
      return inner.read(path);
    },
    commit: (changes) => inner.commit(changes),
  };
}

/** The ways a payload enters a run: its prompt and options, for `payload`. */
const CASES = {
  'a model text reply': (payload) => ({
    source: luaPrompt("return tostring(#models.infer('x'))"),
    options: { models: { default: async () => ({ content: payload }) } },
  }),
  'a tool-call argument in a model reply': (payload) => {
    let rounds = 0;
    return {
      source: luaPrompt("tools.offer_local('grab', 'Grab', { value = 'string' }, function(args) return tostring(#args.value) end)\nmessages:user('go')\nreturn models.loop()"),
      options: {
        models: {
          default: async (request) => (rounds++ === 0
            ? { content: '', tool_calls: [{ id: 'c1', name: 'grab', arguments: { value: payload } }] }
            : { content: request.messages.at(-1).content, finish_reason: 'stop' }),
        },
      },
    };
  },
  'a tool result': (payload) => ({
    source: `---\nuses: [big]\n---\n${luaPrompt("return tostring(#tools.call('big/get', {}))")}`,
    options: { packs: [pack(payload)] },
  }),
  'a store file read': (payload) => ({
    source: luaPrompt("return tostring(#store.read('big.txt'))"),
    options: { store: listingOnly({ 'big.txt': payload }) },
  }),
  'a store file open() hands over': (payload) => ({
    source: luaPrompt("return tostring(#store.read('big.txt'))"),
    options: { store: memoryStore({ 'big.txt': payload }) },
  }),
};

/** One run on a fresh engine; the outcome and how far the wasm memory grew. */
async function measured(kind, payload, limits) {
  const engine = await createEngine();
  const memory = engine[Symbol.for('runvil.memory')];
  const before = memory();
  const { source, options } = CASES[kind](payload);
  const outcome = await engine.run(source, { ...options, limits });
  return { outcome, growth: memory() - before };
}

const WHAT = {
  'a model text reply': 'a model reply',
  'a tool-call argument in a model reply': 'a model reply',
  'a tool result': 'a tool result',
  'a store file read': 'a store file',
  'a store file open() hands over': 'a store file',
};

for (const kind of Object.keys(CASES)) {
  test(`${kind} the ceiling cannot hold is refused before it crosses`, async () => {
    const ceiling = 4 * MiB;
    const payload = 'x'.repeat(40 * MiB);
    const { outcome, growth } = await measured(kind, payload, { memoryBytes: ceiling });
    assert.equal(outcome.ok, false);
    assert.equal(outcome.error.kind, 'Limit');
    assert.match(outcome.error.message, new RegExp(`^memory ceiling of ${ceiling} bytes exceeded in section ## Main: ${WHAT[kind]} of \\d+ bytes does not fit$`));
    const bytes = Number(/of (\d+) bytes does not fit/.exec(outcome.error.message)[1]);
    assert.ok(bytes >= payload.length && bytes < payload.length + 200, `${bytes} bytes named`);
    assert.ok(growth <= SLACK, `the wasm memory grew by ${growth} bytes`);
  });

}

// docs/performance.md, "Memory at the edge", has the figures.
for (const kind of Object.keys(CASES)) {
  test(`${kind} within the ceiling costs at most 3x its size in wasm memory`, async () => {
    const payload = 'x'.repeat(20 * MiB);
    const { outcome, growth } = await measured(kind, payload, { memoryBytes: 256 * MiB });
    assert.equal(outcome.ok, true, JSON.stringify(outcome.error));
    assert.equal(outcome.result, String(payload.length));
    assert.ok(growth <= 3 * payload.length + SLACK, `the wasm memory grew by ${(growth / MiB).toFixed(1)} MiB`);
  });
}

test('file data open() hands over is left for read() where the ceiling cannot hold it', async () => {
  const ceiling = 4 * MiB;
  // Too large alone: the file is listed without it, so a run that never reads it is not charged for it.
  const engine = await createEngine();
  const memory = engine[Symbol.for('runvil.memory')];
  const before = memory();
  const big = memoryStore({ 'big.txt': 'y'.repeat(40 * MiB), 'small.txt': 'hi' });
  const outcome = await engine.run(luaPrompt("return tostring(store.exists('big.txt')) .. store.read('small.txt')"), { store: big, limits: { memoryBytes: ceiling } });
  assert.deepEqual(outcome.ok ? outcome.result : outcome.error, 'truehi');
  assert.ok(memory() - before <= SLACK, `the wasm memory grew by ${memory() - before} bytes`);
  // Too large with the data before it: the files in order, data kept while it fits.
  const reads = [];
  const inner = memoryStore({ 'a.txt': 'a\n'.repeat(1.5 * MiB), 'b.txt': 'b\n'.repeat(1.5 * MiB) });
  const store = {
    open: () => inner.open(),
    read: async (path) => {
      reads.push(path);
      return inner.read(path);
    },
    commit: (changes) => inner.commit(changes),
  };
  const first = await engine.run(luaPrompt("return store.read('a.txt', 1, 1)"), { store, limits: { memoryBytes: ceiling } });
  assert.deepEqual([first.ok ? first.result : first.error, reads], ['a', []]);
  const second = await engine.run(luaPrompt("return store.read('b.txt', 1, 1)"), { store, limits: { memoryBytes: ceiling } });
  assert.equal(second.ok, false);
  assert.equal(second.error.kind, 'Limit');
  // Both files: the one open() handed over and the one read() answered.
  assert.match(second.error.message, new RegExp(`: the store would hold ${6 * MiB} bytes next to \\d+ bytes of Lua heap`));
  assert.deepEqual(reads, ['b.txt']);
});

test('a UTF-8 payload is measured in bytes, not UTF-16 units', async () => {
  // 1.5 Mi characters of 3 UTF-8 bytes each: 4.5 MiB, past a 4 MiB ceiling, though its length is not.
  const payload = '€'.repeat(1.5 * MiB);
  const { outcome } = await measured('a model text reply', payload, { memoryBytes: 4 * MiB });
  assert.match(outcome.error.message, /: a model reply of \d+ bytes does not fit$/);
  const bytes = Number(/reply of (\d+) bytes/.exec(outcome.error.message)[1]);
  assert.ok(bytes > 4.5 * MiB, `${bytes} bytes named`);
});

test('workerd: a reply the ceiling cannot hold is refused before it crosses', { timeout: 120_000 }, async (t) => {
  assert.ok(existsSync(WORKERD), `${WORKERD} is missing (npm dev dependency workerd)`);
  const config = writeWorkerdConfig(tempDir(t, 'workerd'), { modules: { 'worker.js': join(ROOT, 'pkg-tests/runtimes/worker.js') } });
  const server = await serveWorkerd(t, config);
  const ceiling = 4 * MiB;
  const response = await fetch(`${server.url}/too-large?bytes=${40 * MiB}&ceiling=${ceiling}`, { method: 'POST' });
  const { outcome, growth } = await response.json().catch((e) => assert.fail(`${e.message}\n${server.log()}`));
  assert.equal(outcome.error.kind, 'Limit');
  assert.match(outcome.error.message, new RegExp(`^memory ceiling of ${ceiling} bytes exceeded in section ## Main: a model reply of \\d+ bytes does not fit$`));
  assert.ok(growth <= SLACK, `the wasm memory grew by ${growth} bytes`);
});
