// The JS API contract (js/index.d.ts, README.md) against the built package in pkg/.
// Plumbing only: the language itself is tested by the engine's own suites.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as runvil from '../pkg/index.js';
import { createEngine, memoryStore, scriptedModel, version } from '../pkg/index.js';
import { SMOKE_RESULT, luaPrompt, smokeSource } from './helpers.mjs';

const WASM_URL = new URL('../pkg/runvil_bg.wasm', import.meta.url);
const engine = await createEngine();

test('exports the public names and the Cargo version', () => {
  for (const name of ['createEngine', 'memoryStore', 'scriptedModel', 'version']) assert.ok(name in runvil, name);
  const pkg = JSON.parse(readFileSync(new URL('../pkg/package.json', import.meta.url), 'utf8'));
  assert.equal(version, pkg.version);
  assert.equal(engine.engineVersion, version);
});

test('createEngine() loads the bundled module and runs the smoke prompt', async () => {
  const e = await createEngine();
  assert.deepEqual(await e.run(smokeSource(), { seed: 7 }), { ok: true, result: SMOKE_RESULT, seed: '7' });
});

test('createEngine accepts a Module, bytes, an ArrayBuffer, a URL and a string', async () => {
  const bytes = readFileSync(WASM_URL);
  const sources = {
    module: new WebAssembly.Module(bytes),
    Uint8Array: new Uint8Array(bytes),
    ArrayBuffer: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    URL: WASM_URL,
    string: WASM_URL.href,
  };
  for (const [what, wasm] of Object.entries(sources)) {
    const e = await createEngine({ wasm });
    const outcome = await e.run(smokeSource());
    assert.equal(outcome.result, SMOKE_RESULT, what);
  }
});

test('createEngine rejects a wasm option of the wrong type', async () => {
  await assert.rejects(createEngine({ wasm: 42 }), TypeError);
  await assert.rejects(createEngine(null), TypeError);
});

test('run rejects misuse with a TypeError naming the problem', async () => {
  const ok = luaPrompt('return "x"');
  const cases = [
    [() => engine.run(42), /source must be a string/],
    [() => engine.run(undefined), /source must be a string/],
    [() => engine.run(ok, null), /options must be an object/],
    [() => engine.run(ok, 'rivers'), /options must be an object/],
    [() => engine.run(ok, []), /options must be an object/],
    [() => engine.run(ok, { args: 5 }), /args must be a string/],
    [() => engine.run(ok, { args: null }), /args must be a string/],
    [() => engine.run(ok, { seed: -1 }), /seed/],
    [() => engine.run(ok, { seed: 1.5 }), /seed/],
    [() => engine.run(ok, { seed: 2 ** 53 }), /seed/],
    [() => engine.run(ok, { seed: Number.NaN }), /seed/],
    [() => engine.run(ok, { seed: '12a' }), /seed/],
    [() => engine.run(ok, { seed: '-3' }), /seed/],
    [() => engine.run(ok, { seed: '18446744073709551616' }), /u64 range/],
    [() => engine.run(ok, { seed: 2n ** 64n }), /u64 range/],
    [() => engine.run(ok, { onEvent: 'log' }), /onEvent must be a function/],
    [() => engine.run(ok, { signal: {} }), /signal must be an AbortSignal/],
    [() => engine.run(ok, { models: 'gpt' }), /models must be/],
    [() => engine.run(ok, { models: { writer: 'gpt' } }), /models\.writer must be a function/],
    [() => engine.run(ok, { packs: {} }), /packs must be an array/],
    [() => engine.run(ok, { limits: { instructions: -5 } }), /limits\.instructions/],
    [() => engine.run(ok, { limits: { speed: 1 } }), /unknown limit 'speed'/],
    [() => engine.run(ok, { ui: { interactive: 'yes' } }), /ui\.interactive/],
  ];
  for (const [call, message] of cases) {
    await assert.rejects(call, (error) => error instanceof TypeError && message.test(error.message), String(call));
  }
});

test('valid options are accepted', async () => {
  const controller = new AbortController();
  const outcome = await engine.run(luaPrompt('return "x"'), {
    args: 'rivers',
    seed: '42',
    models: { default: scriptedModel([]) },
    onEvent: () => {},
    signal: controller.signal,
    limits: { instructions: 1_000_000 },
    ui: { kind: 'test', interactive: false },
    store: memoryStore(),
    packs: [],
  });
  assert.deepEqual(outcome, { ok: true, result: 'x', seed: '42' });
  assert.equal((await engine.run(luaPrompt('return "x"'), { models: () => undefined })).ok, true);
});

test('an args string with a lone surrogate is a Parse outcome naming the index', async () => {
  const source = luaPrompt('return "x"');
  const cases = [['a\uD800b', 1], ['\uDC00', 0], ['ok \uD83D\uDE00 then \uD83D', 11]];
  for (const [args, index] of cases) {
    assert.deepEqual(await engine.run(source, { args, seed: 3 }), {
      ok: false,
      error: { kind: 'Parse', message: `the argument string is not valid Unicode: lone surrogate at index ${index}` },
      seed: '3',
    });
  }
  assert.equal((await engine.run(source, { args: 'emoji \uD83D\uDE00' })).ok, true);
});

test('seeds: given ones come back as canonical decimal strings, default ones are random u64', async () => {
  const source = luaPrompt('return "x"');
  assert.equal((await engine.run(source, { seed: 42 })).seed, '42');
  assert.equal((await engine.run(source, { seed: 42n })).seed, '42');
  assert.equal((await engine.run(source, { seed: '007' })).seed, '7');
  assert.equal((await engine.run(source, { seed: '18446744073709551615' })).seed, '18446744073709551615');
  const seeds = new Set();
  for (let i = 0; i < 5; i++) {
    const { seed } = await engine.run(source);
    assert.match(seed, /^[0-9]+$/);
    assert.ok(BigInt(seed) < 2n ** 64n);
    seeds.add(seed);
  }
  assert.equal(seeds.size, 5);
});

test('a failing prompt resolves (kind Lua), it does not reject', async () => {
  const outcome = await engine.run(luaPrompt('error("boom")'), { seed: 1 });
  assert.equal(outcome.ok, false);
  assert.equal(outcome.error.kind, 'Lua');
  assert.match(outcome.error.message, /boom/);
  assert.equal(outcome.seed, '1');
});

test('one engine serves many concurrent runs', async () => {
  const runs = Array.from({ length: 24 }, (_, i) =>
    engine.run(luaPrompt(`local s = 0 for k = 1, ${i * 1000} do s = s + k end return "run ${i}: " .. s`), { seed: i }),
  );
  const outcomes = await Promise.all(runs);
  outcomes.forEach((outcome, i) => {
    const n = i * 1000;
    assert.deepEqual(outcome, { ok: true, result: `run ${i}: ${(n * (n + 1)) / 2}`, seed: String(i) });
  });
});

// A trap (what a Rust panic or an engine bug becomes) is forced through the engine's test hook.
test('a trapped instance fails its runs with kind Limit and a fresh one serves the next', async () => {
  const e = await createEngine();
  const trap = e[Symbol.for('runvil.debugTrap')];
  // A long block that yields to the event loop every slice is in flight when the instance dies.
  const busy = e.run(luaPrompt('local n = 0\nfor i = 1, 9e6 do n = n + i end\nreturn n'), { seed: 9, limits: { instructions: 1e12 } });
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.throws(trap);
  const failed = await busy;
  assert.equal(failed.ok, false);
  assert.equal(failed.error.kind, 'Limit');
  assert.match(failed.error.message, /^the engine instance failed \(.+\); a fresh instance serves the next run$/);
  assert.equal(failed.seed, '9');
  assert.equal((await e.run(smokeSource())).result, SMOKE_RESULT);
  // Later runs keep working on the fresh instance, concurrently.
  const burst = await Promise.all([e.run(smokeSource()), e.run(luaPrompt('return "later"'))]);
  assert.deepEqual(burst.map((o) => o.result), [SMOKE_RESULT, 'later']);
});

test('model requests and tool calls carry a signal even when the run was given none', async () => {
  const seen = [];
  const pack = { name: 'probe', description: 'd', tools: [{ name: 'look', description: 'l', parameters: { type: 'object' }, call: (args, ctx) => { seen.push(['tool', ctx.signal.aborted]); return 'ok'; } }] };
  const models = { default: async (request) => { seen.push(['model', request.signal.aborted]); return { content: 'hi', finish_reason: 'stop' }; } };
  const src = `---\nuses: [probe]\n---\n# T\n\n## Main\n\n\`\`\`lua\ntools.call("probe/look", {})\nreturn models.infer("x")\n\`\`\`\n`;
  assert.deepEqual(await engine.run(src, { models, packs: [pack], seed: 1 }), { ok: true, result: 'hi', seed: '1' });
  assert.deepEqual(seen, [['tool', false], ['model', false]]);
});

test('scriptedModel answers in order and says when it runs out', async () => {
  const model = scriptedModel(['first', { content: '', tool_calls: [{ id: 'c1', name: 'web_fetch', arguments: {} }], finish_reason: 'tool_calls' }]);
  assert.deepEqual(await model({ role: 'default', messages: [] }), { content: 'first', finish_reason: 'stop' });
  assert.equal((await model({})).finish_reason, 'tool_calls');
  assert.equal(model.used, 2);
  await assert.rejects(model({}), { message: 'scripted model has no reply left (2 used)' });
  assert.throws(() => scriptedModel('x'), TypeError);
  assert.throws(() => scriptedModel([42]), TypeError);
});

test('memoryStore reads and lists its files', async () => {
  const store = memoryStore({ 'b/paper.md': 'the paper body', 'a.txt': 'A', 'raw.bin': new Uint8Array([0xff, 0x68]) });
  assert.equal(await store.read('b/paper.md'), 'the paper body');
  assert.deepEqual(await store.read('raw.bin'), new Uint8Array([0xff, 0x68]));
  assert.equal(await store.read('missing.md'), undefined);
  assert.deepEqual(await store.list(), ['a.txt', 'b/paper.md', 'raw.bin']);
  await store.commit([{ op: 'write', path: 'c.md', data: new TextEncoder().encode('C') }, { op: 'delete', path: 'a.txt' }]);
  assert.equal(await store.read('c.md'), 'C');
  assert.deepEqual(await store.list(), ['b/paper.md', 'c.md', 'raw.bin']);
  assert.equal(memoryStore({ 'x.md': 'x' }, { readOnly: true }).readOnly, true);
  assert.throws(() => memoryStore({ 'n.md': 5 }), TypeError);
});
