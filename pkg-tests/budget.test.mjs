// The work budget bounds C library loops and finalizers, not only Lua instructions
// (src/lua/budget.rs, wasm-support/lua-patches/budget.patch), and the abort signal stops a block
// busy in library calls. Every program here ran for seconds to hours before the patch. Time
// bounds are safety nets against a hang, not performance claims.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../pkg/index.js';
import { luaPrompt } from './helpers.mjs';

const engine = await createEngine();
const SAFETY_MS = 120_000;

async function bounded(source, options = {}) {
  let timer;
  const hang = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the run did not end within ${SAFETY_MS} ms`)), SAFETY_MS);
  });
  try {
    return await Promise.race([engine.run(source, options), hang]);
  } finally {
    clearTimeout(timer);
  }
}

async function expectBudget(lua) {
  const o = await bounded(luaPrompt(lua));
  assert.equal(o.ok, false, `expected Limit, got ${JSON.stringify(o.result)} for ${lua}`);
  assert.equal(o.error.kind, 'Limit', `${lua}: ${o.error.message}`);
  assert.equal(o.error.message, 'instruction budget of 10000000 exceeded in section ## Main', lua);
  assert.equal((await engine.run(luaPrompt('return "still alive"'))).result, 'still alive');
}

test('pattern matching spends the budget (backtracking, find, gsub)', async () => {
  await expectBudget('return (("a"):rep(16):find(("a*"):rep(16) .. "b"))');
  await expectBudget('local s = ("a"):rep(4000) for i = 1, 1e9 do s:find(".-.-.-b") end');
  await expectBudget('return (("a"):rep(300000):find(".-b"))');
  await expectBudget('local s = ("a"):rep(100000) for i = 1, 1e9 do s:gsub("a", "b") end');
});

test('string building spends the budget (upper, rep, concatenation)', async () => {
  await expectBudget('local s = ("x"):rep(10 * 1024 * 1024) for i = 1, 1e9 do local u = s:upper() end');
  await expectBudget('for i = 1, 1e9 do local s = ("x"):rep(10000000) end');
  await expectBudget('local s = "" for i = 1, 1e9 do s = s .. "abcd" end');
});

test('table library loops spend the budget (move, concat, sort)', async () => {
  await expectBudget('table.move({}, 1, 1e13, 2)');
  await expectBudget('local t = {} for i = 1, 100 do t[i] = ("x"):rep(10000) end for i = 1, 1e9 do local s = table.concat(t) end');
  await expectBudget('local t = {} for i = 1, 200000 do t[i] = (i * 7919) % 200003 end for i = 1, 1e9 do table.sort(t) end');
});

test('a pcall(error) loop spends the budget', async () => {
  await expectBudget('while true do pcall(error, {}) end');
});

test('a runaway finalizer does not hang the host', async () => {
  const o = await bounded(luaPrompt("setmetatable({}, { __gc = function() while true do end end })\nreturn 'done'"));
  if (o.ok) assert.equal(o.result, 'done');
  else assert.equal(o.error.kind, 'Limit', o.error.message);
  assert.equal((await engine.run(luaPrompt('return "still alive"'))).result, 'still alive');
});

test('an AbortSignal stops a block busy in library calls', async () => {
  for (const lua of [
    'local s = ("a"):rep(2000) while true do s:find(".-b") end',
    'local t = {} for i = 1, 100000 do t[i] = (i * 7919) % 100003 end while true do table.sort(t) end',
    'while true do pcall(error, {}) end',
  ]) {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const o = await bounded(luaPrompt(lua), { signal: controller.signal, limits: { instructions: 1e15 } });
    assert.equal(o.ok, false, lua);
    assert.equal(o.error.kind, 'Cancelled', `${lua}: ${o.error.message}`);
  }
});
