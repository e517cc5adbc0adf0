// Hostile hosts and hostile prompts against the built package (docs/reliability.md): every JS
// value a host callback can answer or throw ends in a precise run error, the instance stays alive,
// limits are what one instance can honour, and the same seed repeats a run byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../pkg/index.js';
import { luaPrompt, throwingProxy } from './helpers.mjs';

const engine = await createEngine();

async function stillAlive() {
  assert.equal((await engine.run(luaPrompt('return "still alive"'))).result, 'still alive');
}

function toolPack(call) {
  return { name: 'hostile', tools: [{ name: 'poke', description: 'Poke.', call }] };
}

async function callTool(call, lua = "return tools.call('hostile/poke')") {
  const src = `---\nuses: [hostile]\n---\n\n${luaPrompt(lua)}`;
  const outcome = await engine.run(src, { packs: [toolPack(call)] });
  await stillAlive();
  return outcome;
}

test('a tool answering a value of any JS type ends in a precise outcome', async () => {
  const cases = [
    [() => () => 1, /^tool call failure: the tool's output is not JSON \(it is a function\)/],
    [() => Symbol('s'), /^tool call failure: the tool's output is not JSON \(it is a symbol\)/],
    [() => 10n, /^tool call failure: the tool's output is not JSON/],
    // Awaiting the answer reads its `then`: the trap's own error is the failure.
    [() => throwingProxy(), /^tool call failure: trap get$/],
    [() => { const a = {}; a.a = a; return a; }, /^tool call failure: the tool's output is not JSON/],
  ];
  for (const [call, message] of cases) {
    const o = await callTool(call, "local ok, e = pcall(tools.call, 'hostile/poke')\nreturn tostring(ok) .. '|' .. e.kind .. '|' .. e.message");
    assert.equal(o.ok, true, JSON.stringify(o.error));
    const [ok, kind, text] = o.result.split('|');
    assert.equal(ok, 'false');
    assert.equal(kind, 'tool');
    assert.match(text, message);
  }
  // Structured values and plain text still pass.
  assert.match((await callTool(() => 42)).result, /\n42\n<\/untrusted_input_/);
  assert.equal((await callTool(() => undefined)).ok, true);
});

test('a tool throwing anything is a Tool failure with a sensible message, never "the model call failed"', async () => {
  const thrown = [
    [Object.assign(new Error('x'), { message: 42 }), 'the tool threw an Error whose message is a number, not a string'],
    [Object.assign(new Error('x'), { message: Symbol('m') }), 'the tool threw an Error whose message is a symbol, not a string'],
    [7, 'the tool threw a number, not an Error'],
    [null, 'the tool threw null, not an Error'],
    [undefined, 'the tool threw a undefined, not an Error'],
    [() => 0, 'the tool threw a function, not an Error'],
    ['plain text', 'plain text'],
    [new TypeError('typed'), 'typed'],
  ];
  for (const [value, message] of thrown) {
    const o = await callTool(() => { throw value; }, "local ok, e = pcall(tools.call, 'hostile/poke')\nreturn e.message");
    assert.equal(o.result, `tool call failure: ${message}`);
  }
  // A thrown Proxy whose traps all throw: no trap reaches the engine.
  const o = await callTool(() => { throw throwingProxy(); }, "local ok, e = pcall(tools.call, 'hostile/poke')\nreturn e.message");
  assert.equal(o.result, 'tool call failure: the tool threw a value that could not be inspected');
  const rejected = await callTool(() => Promise.reject(throwingProxy()), "local ok, e = pcall(tools.call, 'hostile/poke')\nreturn e.message");
  assert.equal(rejected.result, 'tool call failure: the tool threw a value that could not be inspected');
});

test('model and store callbacks throwing odd values end in Model and Vfs errors', async () => {
  const odd = Object.assign(new Error('x'), { message: { not: 'a string' } });
  let o = await engine.run(luaPrompt("return models.infer('hi')"), { models: { default: () => { throw odd; } } });
  assert.deepEqual([o.error.kind, o.error.message], ['Model', 'the model function threw an Error whose message is an object, not a string']);
  o = await engine.run(luaPrompt("return models.infer('hi')"), { models: { default: async () => { throw throwingProxy(); } } });
  assert.deepEqual([o.error.kind, o.error.message], ['Model', 'the model function threw a value that could not be inspected']);
  o = await engine.run(luaPrompt("return models.infer('hi')"), { models: { default: async () => () => 1 } });
  assert.equal(o.error.kind, 'Model');
  const store = { open: () => { throw odd; }, read: async () => '', commit: async () => {} };
  o = await engine.run(luaPrompt('return 1'), { store });
  assert.deepEqual([o.error.kind, o.error.message], ['Vfs', "store backend failure: the store's open() threw an Error whose message is an object, not a string"]);
  await stillAlive();
});

test('store.read answering null is a Vfs failure, not an empty file', async () => {
  const store = { open: async () => ({ files: [{ path: 'a.txt' }] }), read: async () => null, commit: async () => {} };
  const o = await engine.run(luaPrompt("return '[' .. store.read('a.txt') .. ']'"), { store });
  assert.deepEqual([o.error.kind, o.error.message], ['Vfs', 'store backend failure: read("a.txt") answered no contents for a file open() listed']);
});

test('abort() is honoured while the store never settles', async () => {
  for (const hang of ['open', 'commit']) {
    const controller = new AbortController();
    const store = {
      open: hang === 'open' ? () => new Promise(() => {}) : async () => ({ files: [] }),
      read: async () => '',
      commit: hang === 'commit' ? () => new Promise(() => {}) : async () => {},
    };
    setTimeout(() => controller.abort(), 50);
    const o = await engine.run(luaPrompt("store.write('a.txt', 'x')\nreturn 'done'"), { store, signal: controller.signal });
    assert.deepEqual([o.error?.kind, o.error?.message], ['Cancelled', 'the run was cancelled'], hang);
  }
  await stillAlive();
});

test('limits are what one instance can honour', async () => {
  await assert.rejects(engine.run(luaPrompt('return 1'), { limits: { memoryBytes: 2 ** 40 } }), /limits\.memoryBytes must be at most 1073741824/);
  assert.equal((await engine.run(luaPrompt('return 1'), { limits: { memoryBytes: 2 ** 30 } })).result, '1');
});

test('a huge source is refused before it is copied into the instance', async () => {
  const huge = '# Huge\n\n' + 'é'.repeat(9 * 1024 * 1024); // 18 MiB of UTF-8 in 9 Mi UTF-16 units
  const o = await engine.run(huge);
  assert.deepEqual([o.error.kind, o.error.message], ['Parse', `the prompt is ${8 + 18 * 1024 * 1024} bytes; the limit is 16777216 bytes (16 MiB)`]);
});

test('concurrent runs past what one instance can hold run on another', async () => {
  const mine = await createEngine();
  // 1 GiB ceilings: three fit in one instance's 3 GiB budget; the fourth and fifth get a second
  // instance, which is dropped again once idle (pkg-tests/load.test.mjs has the queue past the last).
  const block = luaPrompt("local t = {}\nfor i = 1, 20 do t[i] = string.rep('x', 1 << 20) .. i end\nreturn 'held'");
  const outcomes = await Promise.all(Array.from({ length: 5 }, () => mine.run(block, { limits: { memoryBytes: 2 ** 30 } })));
  assert.deepEqual(outcomes.map((o) => o.result), Array(5).fill('held'));
  assert.equal(mine[Symbol.for('runvil.instances')](), 1);
  assert.equal((await mine.run(luaPrompt('return "next"'))).result, 'next');
});

test('__gc finalizers are refused, so none can call the Engine at run end', async () => {
  for (const call of ["log('late')", "store.write('x', 'y')", 'while true do end']) {
    const o = await engine.run(luaPrompt(`setmetatable({}, { __gc = function() ${call} end })\nreturn 'ok'`));
    assert.equal(o.error.kind, 'Lua');
    assert.match(o.error.message, /__gc finalizers are not available in Runvil/);
  }
  await stillAlive();
});

test('xpcall(error, error) answers false and the run goes on', async () => {
  const o = await engine.run(luaPrompt('local ok, e = xpcall(error, error)\nreturn tostring(ok)'));
  assert.equal(o.result, 'false');
});

test('the same seed repeats the run byte for byte', async () => {
  const src = luaPrompt([
    'local t = {}',
    "for i = 1, 50 do t['key' .. i] = i end",
    'local keys = {}',
    'for k in pairs(t) do keys[#keys + 1] = k end',
    'local big = {}',
    'for i = 1, 300 do big[i] = (i * 7919) % 101 end',
    'table.sort(big, function(a, b) return a < b end)',
    "return table.concat(keys, ',') .. '|' .. math.random(1, 1e9) .. '|' .. tostring({}) .. '|' .. tostring(print or pairs)",
  ].join('\n'));
  const a = await engine.run(src, { seed: 5 });
  // Other allocations in between must not change it.
  await engine.run(luaPrompt("local t = {} for i = 1, 1e4 do t[i] = {} end return 1"), { seed: 9 });
  const b = await engine.run(src, { seed: 5 });
  assert.equal(a.result, b.result);
  assert.match(a.result, /\|table: 0x00000001\|function: 0x00000002$/);
  assert.notEqual((await engine.run(src, { seed: 6 })).result, a.result);
});
