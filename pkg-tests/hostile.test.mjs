// Hostile prompts and inputs end in a precise outcome, never a dead engine: each test runs the
// next prompt on the same engine afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../pkg/index.js';
import { luaPrompt } from './helpers.mjs';

const engine = await createEngine();

async function expectError(source, options, kind, message) {
  const outcome = await engine.run(source, options);
  assert.equal(outcome.ok, false, `expected ${kind}, got ${JSON.stringify(outcome.result)}`);
  assert.equal(outcome.error.kind, kind, outcome.error.message);
  if (message instanceof RegExp) assert.match(outcome.error.message, message);
  else if (message !== undefined) assert.equal(outcome.error.message, message);
  // The engine still serves the next run.
  assert.deepEqual(await engine.run(luaPrompt('return "still alive"')).then((o) => o.result), 'still alive');
  return outcome;
}

test('an endless loop ends with Limit (instruction budget)', async () => {
  const o = await expectError(luaPrompt('while true do end'), {}, 'Limit', 'instruction budget of 10000000 exceeded in section ## Main');
  assert.equal(o.error.section, '## Main');
});

test('pcall cannot swallow the budget', async () => {
  await expectError(luaPrompt('while true do pcall(function() while true do end end) end'), {}, 'Limit', /^instruction budget/);
});

test('a memory bomb ends with Limit (memory ceiling)', async () => {
  await expectError(luaPrompt("local t = {}\nfor i = 1, 1e9 do t[i] = string.rep('x', 4096) .. i end"), {}, 'Limit', /^memory ceiling of 67108864 bytes exceeded in section ## Main$/);
  await expectError(luaPrompt("local s = 'x'\nwhile true do s = s .. s end"), {}, 'Limit', /^memory ceiling/);
});

test('a host can lower the limits', async () => {
  await expectError(luaPrompt('for i = 1, 1e6 do end'), { limits: { instructions: 20000 } }, 'Limit', 'instruction budget of 20000 exceeded in section ## Main');
  await expectError(luaPrompt("local t = {}\nfor i = 1, 1e6 do t[i] = i end"), { limits: { memoryBytes: 1 << 20 } }, 'Limit', /^memory ceiling of 1048576 bytes/);
});

test('deep recursion is a Lua error, also through pcall', async () => {
  await expectError(luaPrompt('local function f(n) return f(n + 1) + 1 end\nreturn f(1)'), {}, 'Lua', /stack overflow/);
  await expectError(luaPrompt('local function f() local ok, e = pcall(f) error(e, 0) end\nf()'), {}, 'Lua', /stack overflow|C stack overflow/);
  await expectError(luaPrompt("local function f(s) return (s:gsub('.', function(c) return f(c) end)) end\nreturn f('ab')"), {}, 'Lua', /stack overflow/);
});

test('a huge prompt is refused with Parse before any work', async () => {
  const huge = '# Huge\n\n' + 'x'.repeat(17 * 1024 * 1024);
  await expectError(huge, {}, 'Parse', /^the prompt is \d+ bytes; the limit is 16777216 bytes \(16 MiB\)$/);
});

test('a large but allowed prompt runs (10,000 sections)', async () => {
  let src = '# Many\n\n';
  for (let i = 0; i < 10000; i++) src += `## S${i}\n\ntext ${i}\n\n`;
  src += '## Last\n\n```lua\nreturn #prompt.sections\n```\n';
  assert.equal((await engine.run(src)).result, '10001');
});

test('an args string that is not well-formed Unicode is a Parse outcome', async () => {
  await expectError(luaPrompt('return args'), { args: 'ok \ud800 bad' }, 'Parse', 'the argument string is not valid Unicode: lone surrogate at index 3');
});

test('strings that are not UTF-8 inside Lua never break the engine', async () => {
  await expectError(luaPrompt("return '\\xff\\xfe'"), {}, 'Lua', 'cannot return a string that is not valid UTF-8 as a result');
  const o = await engine.run(luaPrompt("var.x = '\\xff'\nreturn json.encode(var.x)"));
  assert.equal(o.result, '"\ufffd"');
});

test('an AbortSignal cancels a busy block', async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  await expectError(luaPrompt('while true do end'), { signal: controller.signal, limits: { instructions: 1e15 } }, 'Cancelled', 'the run was cancelled');
  await expectError(luaPrompt('return 1'), { signal: AbortSignal.abort() }, 'Cancelled');
});

test('an AbortSignal cancels a waiting model call', async () => {
  const controller = new AbortController();
  const slow = (request) => new Promise((resolve) => {
    const t = setTimeout(() => resolve({ content: 'late' }), 10_000);
    request.signal?.addEventListener('abort', () => clearTimeout(t));
  });
  setTimeout(() => controller.abort(), 30);
  await expectError(luaPrompt("return models.infer('hi')"), { signal: controller.signal, models: { default: slow } }, 'Cancelled');
});

test('a throwing observer cannot break the run', async () => {
  const o = await engine.run(luaPrompt("log('x')\nreturn 'done'"), { onEvent: () => { throw new Error('observer bug'); } });
  assert.equal(o.result, 'done');
});

test('malformed model replies are Model errors', async () => {
  await expectError(luaPrompt("return models.infer('hi')"), { models: { default: async () => 42 } }, 'Model', "the model's reply is not an object");
  await expectError(luaPrompt("return models.infer('hi')"), { models: { default: async () => ({ content: 7 }) } }, 'Model', "the model's reply is malformed: content must be a string");
  await expectError(luaPrompt("return models.infer('hi')"), { models: { default: async () => { throw new Error('provider down'); } } }, 'Model', 'provider down');
  await expectError(luaPrompt("return models.infer('hi')"), {}, 'Model', 'no model is bound to the role default');
});
