// A seeded fuzzer of engine.run with hostile host callbacks (docs/reliability.md): tools, models
// and store backends answering, throwing and rejecting with values of every JS type (cyclic objects,
// throwing getters and toJSON, Proxies whose traps throw, BigInt, Symbol, lone surrogates, huge
// strings), and promises that never settle (the run is then aborted). Every run must resolve to a
// well-formed outcome, never reject, hang or kill the engine, and the engine must then run a known
// prompt correctly. RUNVIL_FUZZ_ITERS sets the number of runs (default 400), RUNVIL_FUZZ_SEED the
// stream; a failure prints the seed and iteration to replay.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../pkg/index.js';
import { luaPrompt, mulberry32, throwingProxy } from './helpers.mjs';

const ITERS = Number(process.env.RUNVIL_FUZZ_ITERS ?? 400);
const SEED = Number(process.env.RUNVIL_FUZZ_SEED ?? 1);
const KINDS = new Set(['Lua', 'Tool', 'Model', 'Vfs', 'Determinism', 'RequirementsUnmet', 'Frontmatter', 'Parse', 'Limit', 'Cancelled']);

/** The shared seeded generator with the draws this fuzzer uses. */
function rng(seed) {
  const next = mulberry32(seed);
  return { next, below: (n) => Math.floor(next() * n), pick: (xs) => xs[Math.floor(next() * xs.length)] };
}

/** A value of some JS type, hostile or plain. */
function value(r, depth = 0) {
  const makers = [
    () => undefined, () => null, () => true, () => 0, () => -0, () => NaN, () => Infinity, () => 1e308, () => 2 ** 53 + 1,
    () => 10n, () => Symbol('s'), () => () => 1, () => 'plain text', () => '', () => '\ud800 lone', () => '\0nul',
    () => 'x'.repeat(1 << 20), () => '{"content": "json in a string"}', () => new Date(0), () => new Map([[1, 2]]),
    () => new Uint8Array([1, 2]), () => [1, , 3], () => { const a = {}; a.a = a; return a; },
    () => ({ toJSON() { throw new Error('toJSON threw'); } }), () => ({ get content() { throw new Error('getter threw'); } }),
    () => throwingProxy(), () => Object.create(null), () => new Error('an error'), () => Object.assign(new Error('x'), { message: 42 }),
    () => ({ content: 'ok', finish_reason: 'stop' }), () => ({ content: 7 }), () => ({ content: '', tool_calls: 'nope' }),
    () => ({ content: '', tool_calls: [{ id: 'c', name: 'fz_poke', arguments: depth < 2 ? value(r, depth + 1) : {} }] }),
    () => ({ files: depth < 2 ? value(r, depth + 1) : [] }), () => ({ files: [{ path: 'a.txt', data: value(r, depth + 1) }] }),
    () => (depth < 2 ? [value(r, depth + 1), value(r, depth + 1)] : []),
    () => (depth < 2 ? { a: value(r, depth + 1) } : {}),
  ];
  return r.pick(makers)();
}

/** How a callback answers: returns, throws, resolves, rejects, or never settles. */
function behaviour(r) {
  const v = value(r);
  switch (r.below(6)) {
    case 0: return { hangs: false, f: () => v };
    case 1: return { hangs: false, f: () => { throw v; } };
    case 2: return { hangs: false, f: async () => v };
    case 3: return { hangs: false, f: () => Promise.reject(v) };
    case 4: return { hangs: true, f: () => new Promise(() => {}) };
    default: return { hangs: false, f: () => new Promise((resolve) => setTimeout(() => resolve(v), r.below(3))) };
  }
}

const BLOCKS = [
  "return tools.call('fz/poke', { q = 'x' })",
  "local ok, e = pcall(tools.call, 'fz/poke')\nreturn tostring(ok) .. tostring(e)",
  "return models.infer('hi')",
  "local ok, e = pcall(models.infer, 'hi')\nreturn tostring(e)",
  "messages:user('go')\nreturn models.loop()",
  "return store.read('a.txt')",
  "store.write('b.txt', 'x')\nreturn store.glob('*')[1]",
  "local ok, e = pcall(store.read, 'a.txt')\nstore.write('c.txt', 'y')\nreturn tostring(ok)",
];

const KNOWN = luaPrompt("store.write('k.txt', 'k')\nreturn ('k'):upper() .. store.read('k.txt') .. json.encode({ 1 })");

test(`engine.run with hostile host callbacks: ${ITERS} seeded runs (seed ${SEED})`, async () => {
  const engine = await createEngine();
  const r = rng(SEED);
  const tally = {};
  const messages = new Set();
  for (let i = 0; i < ITERS; i++) {
    const tool = behaviour(r), model = behaviour(r), open = behaviour(r), read = behaviour(r), commit = behaviour(r);
    const useStore = r.below(2) === 0;
    const lua = r.pick(BLOCKS);
    const source = `---\nuses: [fz]\n---\n\n${luaPrompt(lua)}`;
    const controller = new AbortController();
    const hangs = tool.hangs || model.hangs || (useStore && (open.hangs || read.hangs || commit.hangs));
    const timer = setTimeout(() => controller.abort(), hangs ? 20 : 5000);
    const options = {
      seed: i,
      signal: controller.signal,
      packs: [{ name: 'fz', tools: [{ name: 'poke', description: 'Poke.', output: r.below(2) ? 'structured' : 'plain', call: tool.f }] }],
      models: { default: model.f },
      limits: { maxToolIterations: 3 },
    };
    if (useStore) options.store = { open: open.f, read: read.f, commit: commit.f };
    let outcome;
    try {
      outcome = await engine.run(source, options);
    } catch (e) {
      assert.fail(`seed ${SEED} run ${i}: engine.run rejected: ${e?.stack ?? e}`);
    } finally {
      clearTimeout(timer);
    }
    assert.equal(typeof outcome.ok, 'boolean', `seed ${SEED} run ${i}`);
    if (outcome.ok) assert.ok(outcome.result === null || typeof outcome.result === 'string', `seed ${SEED} run ${i}`);
    else {
      assert.ok(KINDS.has(outcome.error.kind), `seed ${SEED} run ${i}: kind ${outcome.error.kind}`);
      assert.equal(typeof outcome.error.message, 'string', `seed ${SEED} run ${i}`);
      assert.ok(!/unwrap|panicked|RuntimeError: unreachable/.test(outcome.error.message), `seed ${SEED} run ${i}: ${outcome.error.message}`);
    }
    const key = outcome.ok ? 'ok' : outcome.error.kind;
    tally[key] = (tally[key] ?? 0) + 1;
    if (!outcome.ok) messages.add(`${outcome.error.kind}: ${outcome.error.message.slice(0, 110).replace(/\d+/g, 'N')}`);
    if (i % 50 === 49 || i === ITERS - 1) {
      const known = await engine.run(KNOWN);
      assert.deepEqual([known.ok, known.result], [true, 'Kk[1]'], `seed ${SEED} after run ${i}: ${JSON.stringify(known.error)}`);
    }
  }
  if (process.env.RUNVIL_FUZZ_REPORT) console.log(`outcomes: ${JSON.stringify(tally)}\n${[...messages].sort().join('\n')}`);
});
