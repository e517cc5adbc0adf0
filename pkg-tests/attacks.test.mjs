// The attack catalog (pkg-tests/attack-catalog.mjs) against the built package: each attack ends in
// its exact expected outcome, and the same engine then runs a known prompt correctly. The known
// prompt touches what an attack could have left behind: the string metatable, the string and
// table libraries, _G's metatable, the lazily loaded Engine globals, var and json.
//
// RUNVIL_ATTACKS_PROBE=1 prints every attack's actual outcome instead of asserting (for writing
// new entries).
import { test, after } from 'node:test';
import { Worker } from 'node:worker_threads';
import assert from 'node:assert/strict';
import { createEngine } from '../pkg/index.js';
import { luaPrompt } from './helpers.mjs';
import { attacks } from './attack-catalog.mjs';

const engine = await createEngine();

const KNOWN = luaPrompt([
  'var.n = 41',
  "local parts = { ('abc'):upper(), tostring(getmetatable('').__index == string), tostring(getmetatable(_G)) }",
  'parts[#parts + 1] = type(tools) .. type(tasks) .. type(models) .. type(jump)',
  "parts[#parts + 1] = json.encode({ n = var.n + 1 }) .. (' '):rep(2) .. table.concat({ 1, 2 }, ',')",
  "return table.concat(parts, '|')",
].join('\n'));
const KNOWN_RESULT = 'ABC|true|nil|tabletabletablefunction|{"n":42}  1,2';

function sourceOf(entry) {
  return entry.source ?? luaPrompt(entry.lua);
}

function optionsOf(entry) {
  return typeof entry.options === 'function' ? entry.options() : (entry.options ?? {});
}

// Attacks that could block the thread run in a worker, bounded by a safety net (not a
// performance claim) that terminates it.
const SAFETY_MS = 60_000;
let worker;
async function isolated(entry) {
  worker ??= new Worker(new URL('./budget-worker.mjs', import.meta.url));
  await new Promise((resolve) => (worker.ready ? resolve() : worker.once('message', () => { worker.ready = true; resolve(); })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      worker.terminate();
      worker = undefined;
      reject(new Error(`the run did not end within ${SAFETY_MS} ms (worker terminated)`));
    }, SAFETY_MS);
    worker.once('message', (m) => { clearTimeout(timer); resolve(m.outcome); });
    worker.postMessage({ id: 0, source: sourceOf(entry), options: entry.options ?? {}, abortAfterMs: entry.isolate.abortAfterMs });
  });
}
after(() => worker?.terminate());

function runEntry(entry) {
  return entry.isolate ? isolated(entry) : engine.run(sourceOf(entry), optionsOf(entry));
}

function check(outcome, expect, what) {
  const shown = JSON.stringify(outcome.ok ? outcome.result?.slice(0, 200) : outcome.error).slice(0, 400);
  if ('result' in expect || 'resultLength' in expect) {
    assert.equal(outcome.ok, true, `${what}: expected success, got ${shown}`);
    if ('resultLength' in expect) assert.equal(outcome.result.length, expect.resultLength, what);
    else if (expect.result instanceof RegExp) assert.match(outcome.result, expect.result, what);
    else assert.equal(outcome.result, expect.result, what);
    return;
  }
  assert.equal(outcome.ok, false, `${what}: expected ${expect.kind}, got ${shown}`);
  assert.equal(outcome.error.kind, expect.kind, `${what}: ${outcome.error.message.slice(0, 300)}`);
  if ('messageLength' in expect) assert.equal(outcome.error.message.length, expect.messageLength, what);
  else if (expect.message instanceof RegExp) assert.match(outcome.error.message, expect.message, what);
  else assert.equal(outcome.error.message, expect.message, what);
}

if (process.env.RUNVIL_ATTACKS_PROBE) {
  for (const entry of attacks) {
    const t0 = performance.now();
    const o = await runEntry(entry);
    const ms = Math.round(performance.now() - t0);
    const shown = o.ok ? { result: o.result?.slice(0, 160) } : { kind: o.error.kind, message: o.error.message.slice(0, 200) };
    const known = (await engine.run(KNOWN)).result;
    if (ms > 2000) console.log('   (slow)');
    console.log(`${entry.area} | ${entry.name} | ${ms} ms | ${JSON.stringify(shown)}${known === KNOWN_RESULT ? '' : ` | NEXT RUN WRONG: ${known}`}`);
    if (entry.next) {
      const n = await engine.run(sourceOf(entry.next), optionsOf(entry.next));
      console.log(`   next: ${JSON.stringify(n.ok ? n.result : n.error)}`);
    }
  }
  await worker?.terminate();
} else {
  for (const entry of attacks) {
    test(`${entry.group} / ${entry.area}: ${entry.name}`, async () => {
      const outcome = await runEntry(entry);
      check(outcome, entry.expect, entry.name);
      if (entry.next) check(await engine.run(sourceOf(entry.next), optionsOf(entry.next)), entry.next.expect, `${entry.name} (next run)`);
      // The engine is alive and the next run is correct.
      const known = await engine.run(KNOWN);
      assert.deepEqual([known.ok, known.result], [true, KNOWN_RESULT], JSON.stringify(known.error));
    });
  }

  test('the catalog counts what the docs say', () => {
    const escapes = attacks.filter((a) => a.group === 'escape').length;
    const resources = attacks.filter((a) => a.group === 'resource').length;
    assert.ok(escapes > 0 && resources > 0);
    if (process.env.RUNVIL_ATTACKS_COUNT) console.log(`escapes ${escapes}, resources ${resources}, areas ${new Set(attacks.map((a) => a.area)).size}`);
  });
}
