// API misuse never crashes the host: a wrong shape in any run option ends in a TypeError that says
// what to pass, or in an outcome, and nothing reaches the host process as an unhandled rejection
// or an uncaught exception. A seeded fuzzer tries option objects of every wrong shape
// (RUNVIL_FUZZ_ITERS runs, default 300; RUNVIL_FUZZ_SEED picks the stream).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine, memoryStore, scriptedModel, openAIChatModel } from '../pkg/index.js';
import { luaPrompt, mulberry32, throwingProxy } from './helpers.mjs';

const engine = await createEngine();

/** Everything that reached the process unhandled while `body` ran (and a turn after it). */
async function unhandledDuring(body) {
  const seen = [];
  const onRejection = (reason) => seen.push(`unhandled rejection: ${reason?.stack ?? reason}`);
  const onException = (error) => seen.push(`uncaught exception: ${error?.stack ?? error}`);
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  try {
    await body();
    // Unhandled rejections are reported after the microtask queue drains.
    await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  }
  return seen;
}

const ASKS_MODEL = luaPrompt("return models.infer('hi')");

test('a model function where the role map goes is a TypeError that says what to pass', async () => {
  const seen = await unhandledDuring(async () => {
    for (const model of [scriptedModel(['a reply']), openAIChatModel({ baseURL: 'http://127.0.0.1:9', model: 'm' })]) {
      await assert.rejects(engine.run(ASKS_MODEL, { models: model }), {
        name: 'TypeError',
        message: /^engine\.run: models is a model function; pass it by role, e\.g\. \{ default: model \}/,
      });
    }
    // A hand-written model function carries no mark: it is called as a resolver, answers a
    // promise, and the run says so once it ends; the promise's rejection is handled.
    const handWritten = async () => {
      throw new Error('not a resolver');
    };
    await assert.rejects(engine.run(ASKS_MODEL, { models: handWritten }), {
      name: 'TypeError',
      message: /answered a Promise: it looks like a model function; pass it by role/,
    });
  });
  assert.deepEqual(seen, []);
  assert.equal((await engine.run(luaPrompt('return "still alive"'))).result, 'still alive');
});

test('a misspelt run option is a TypeError naming the known ones', async () => {
  await assert.rejects(engine.run(ASKS_MODEL, { model: { default: scriptedModel(['x']) } }), {
    name: 'TypeError',
    message: "engine.run: unknown option 'model' (known: args, seed, models, packs, store, signal, onEvent, limits, ui, record, replay, resume, resumeInFlight, tracer, traceContent)",
  });
});

/** A value of some JS type, plain or hostile, for an option slot. */
function wrongValue(r) {
  const makers = [
    () => undefined, () => null, () => 0, () => NaN, () => -1, () => 'text', () => '', () => true, () => 10n,
    () => Symbol('s'), () => [], () => [1, 'a', null], () => ({}), () => ({ a: 1 }), () => new Map(),
    () => () => undefined, () => () => 1, () => async () => 'x', () => async () => { throw new Error('rejected'); },
    () => () => Promise.reject(new Error('rejected later')), () => throwingProxy(),
    () => ({ get kind() { throw new Error('getter threw'); } }),
    () => ({ open: 1, read: 2, commit: 3 }), () => ({ open: async () => 'garbage', read: async () => 5, commit: async () => {} }),
    () => ({ open: () => Promise.reject(new Error('open rejected')), read: async () => '', commit: async () => {} }),
    () => [{ name: 'p', tools: [{ name: 't', call: () => Promise.reject(new Error('tool rejected')) }] }],
    () => [{ name: 'p', tools: 'not a list' }], () => ({ instructions: -5 }), () => ({ memoryBytes: 2 ** 40 }),
    () => ({ kind: 7 }), () => ({ aborted: 'no', addEventListener: 1 }),
  ];
  return makers[Math.floor(r() * makers.length)]();
}

const SLOTS = ['args', 'seed', 'models', 'packs', 'store', 'signal', 'onEvent', 'limits', 'ui', 'model', 'pack', 'sotre'];
const SOURCES = [
  ASKS_MODEL,
  luaPrompt("store.write('a.txt', 'x')\nreturn store.read('a.txt')"),
  `---\nuses: [p]\n---\n\n${luaPrompt("return tools.call('p/t', {})")}`,
  luaPrompt('return args'),
];
const ITERS = Number(process.env.RUNVIL_FUZZ_ITERS ?? 300);
const SEED = Number(process.env.RUNVIL_FUZZ_SEED ?? 7);

test(`${ITERS} runs with options of every wrong shape: an outcome or a TypeError, nothing unhandled`, async () => {
  const r = mulberry32(SEED);
  const seen = await unhandledDuring(async () => {
    for (let i = 0; i < ITERS; i++) {
      const options = {};
      const count = 1 + Math.floor(r() * 3);
      for (let k = 0; k < count; k++) options[SLOTS[Math.floor(r() * SLOTS.length)]] = wrongValue(r);
      const source = SOURCES[Math.floor(r() * SOURCES.length)];
      const where = `seed ${SEED}, iteration ${i}: ${Object.keys(options).join(', ')}`;
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), 2000);
      let outcome;
      try {
        // A signal slot the fuzzer filled is left as drawn; otherwise a watchdog cancels hangs.
        outcome = await engine.run(source, 'signal' in options ? options : { ...options, signal: controller.signal });
      } catch (error) {
        assert.ok(error instanceof TypeError, `${where}: rejected with ${error?.stack ?? error}`);
        assert.match(error.message, /^engine\.run: /, where);
        continue;
      } finally {
        clearTimeout(timer);
      }
      assert.equal(typeof outcome.ok, 'boolean', where);
      if (!outcome.ok) assert.equal(typeof outcome.error.message, 'string', where);
    }
  });
  assert.deepEqual(seen, []);
  assert.equal((await engine.run(luaPrompt('return "still alive"'), { store: memoryStore() })).result, 'still alive');
});
