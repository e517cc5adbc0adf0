// The work budget bounds C library loops and finalizers, not only Lua instructions
// (src/lua/budget.rs, vendor/lua-src/patches/budget.patch), and the abort signal stops a block
// busy in library calls. Every program here ran for seconds to hours before the patch. Time
// bounds are safety nets against a hang, not performance claims.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { luaPrompt } from './helpers.mjs';

// The engine runs in a worker: a block stuck in one synchronous call would block this thread's
// event loop too, and no timer here could fail the test.
const SAFETY_MS = Number(process.env.RUNVIL_BUDGET_TEST_SAFETY_MS ?? 120_000);
let nextId = 0;
const pending = new Map();
let worker;
let ready;
function spawn() {
  worker = new Worker(new URL('./budget-worker.mjs', import.meta.url), { workerData: { pkg: process.env.RUNVIL_BUDGET_TEST_PKG } });
  ready = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  worker.on('message', (m) => pending.get(m.id)?.(m.outcome));
}
spawn();
after(() => worker.terminate());

async function bounded(source, options = {}, abortAfterMs = undefined) {
  await ready;
  const id = nextId++;
  let timer;
  try {
    return await new Promise((resolve, reject) => {
      pending.set(id, resolve);
      timer = setTimeout(() => {
        worker.terminate();
        spawn(); // the next test gets a fresh engine
        reject(new Error(`the run did not end within ${SAFETY_MS} ms (worker terminated)`));
      }, SAFETY_MS);
      worker.postMessage({ id, source, options, abortAfterMs });
    });
  } finally {
    clearTimeout(timer);
    pending.delete(id);
  }
}

async function expectBudget(lua) {
  const o = await bounded(luaPrompt(lua));
  assert.equal(o.ok, false, `expected Limit, got ${JSON.stringify(o.result)} for ${lua}`);
  assert.equal(o.error.kind, 'Limit', `${lua}: ${o.error.message}`);
  assert.equal(o.error.message, 'instruction budget of 10000000 exceeded in section ## Main', lua);
  assert.equal((await bounded(luaPrompt('return "still alive"'))).result, 'still alive');
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
  // The rule in force refuses `__gc` in setmetatable (docs/language.md); a budget stop is the
  // other acceptable end. Either way the host is not held and the next run works.
  if (o.ok) assert.equal(o.result, 'done');
  else if (o.error.kind === 'Lua') assert.match(o.error.message, /__gc finalizers are not available/);
  else assert.equal(o.error.kind, 'Limit', o.error.message);
  assert.equal((await bounded(luaPrompt('return "still alive"'))).result, 'still alive');
});

test('an AbortSignal stops a block busy in library calls', async () => {
  for (const lua of [
    'local s = ("a"):rep(2000) while true do s:find(".-b") end',
    'local t = {} for i = 1, 100000 do t[i] = (i * 7919) % 100003 end while true do table.sort(t) end',
    'while true do pcall(error, {}) end',
  ]) {
    const o = await bounded(luaPrompt(lua), { limits: { instructions: 1e15 } }, 50);
    assert.equal(o.ok, false, lua);
    assert.equal(o.error.kind, 'Cancelled', `${lua}: ${o.error.message}`);
  }
});
