// A server under load: one engine takes every run it is given. Runs spread over more wasm
// instances when one has no room for their memory ceilings, wait their turn past the last, and
// end exactly as they end run one by one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine, memoryStore } from '../pkg/index.js';
import { luaPrompt, mulberry32 } from './helpers.mjs';

const instancesOf = (engine) => engine[Symbol.for('runvil.instances')]();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The kinds of run a server mixes: a tool loop, a fanout of model rounds, store work, compute. */
const KINDS = [
  {
    source: `---\nuses: [calc]\n---\n\n${luaPrompt("tools.offer({ 'calc/add' })\nmessages:user('add')\nreturn models.loop()")}`,
    replies: (i) => [
      { content: '', tool_calls: [{ id: 'c1', name: 'calc_add', arguments: { a: i, b: 1 } }], finish_reason: 'tool_calls' },
      { content: `sum for ${i}`, finish_reason: 'stop' },
    ],
  },
  {
    source: `# F\n\n## Main\n\n\`\`\`lua\nlocal rs = tasks.fanout('### Arm', { 1, 2, 3 })\nlocal out = {}\nfor i, r in ipairs(rs) do out[i] = r.text end\nreturn table.concat(out, ',')\n\`\`\`\n\n### Arm\n\n\`\`\`lua\nreturn models.infer('arm ' .. item) .. '#' .. item\n\`\`\`\n`,
    // Arms ask concurrently: the reply depends on the question, never on the order of asking.
    replies: (i) => [(request) => `${request.messages.at(-1).content} of run ${i}`],
  },
  {
    source: luaPrompt("for i = 1, 20 do store.append('log.txt', i .. ',') end\nvar.n = #store.read('log.txt')\nreturn var.n .. ' ' .. math.random(1000)"),
    replies: () => [],
  },
  {
    source: luaPrompt('local n = 0\nfor i = 1, 20000 do n = n + i % 7 end\nreturn n .. " " .. sys.execution'),
    replies: () => [],
  },
];

function options(i) {
  const kind = KINDS[i % KINDS.length];
  const replies = kind.replies(i);
  const random = mulberry32(i);
  let next = 0;
  // Each reply comes after 0-4 ms, so the runs overlap at every await.
  const model = async (request) => {
    await sleep(Math.floor(random() * 5));
    const reply = typeof replies[0] === 'function' ? replies[0](request) : replies[next++];
    if (reply === undefined) throw new Error(`no reply left for run ${i} (${request.section})`);
    return typeof reply === 'string' ? { content: reply, finish_reason: 'stop' } : reply;
  };
  const calc = {
    name: 'calc',
    description: 'Arithmetic.',
    tools: [{
      name: 'add',
      description: 'Adds a and b.',
      parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      call: async ({ a, b }) => { await sleep(1); return String(a + b); },
    }],
  };
  return { seed: i, models: { default: model }, packs: [calc], store: memoryStore() };
}

async function runOne(engine, i) {
  const { source } = KINDS[i % KINDS.length];
  const opts = options(i);
  const outcome = await engine.run(source, opts);
  return { outcome, files: await opts.store.list() };
}

test('500 concurrent mixed runs on one engine all complete, as they do one by one', async () => {
  const engine = await createEngine();
  const alone = [];
  for (let i = 0; i < 500; i++) alone.push(await runOne(engine, i));
  for (const { outcome } of alone) assert.equal(outcome.ok, true, JSON.stringify(outcome.error));
  const together = await Promise.all(Array.from({ length: 500 }, (_, i) => runOne(engine, i)));
  assert.deepEqual(together, alone);
  // The default ceiling (64 MiB) admits 48 runs per instance: 500 runs took more than one, and
  // the extra instances are dropped once idle.
  assert.equal(instancesOf(engine), 1);
});

/** A prompt that holds its memory until `gate` opens, so the test controls what is in flight. */
function heldRun(engine, gate, started, signal) {
  const models = { default: async () => { started.count += 1; await gate.promise; return { content: 'done', finish_reason: 'stop' }; } };
  return engine.run(luaPrompt("local t = {}\nfor i = 1, 4 do t[i] = string.rep('x', 1 << 20) .. i end\nreturn models.infer('wait')"), {
    models,
    signal,
    limits: { memoryBytes: 2 ** 30 },
  });
}

function deferred() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

async function until(condition) {
  for (let i = 0; i < 2000 && !condition(); i++) await sleep(5);
  assert.ok(condition(), 'timed out waiting');
}

test('runs past what every instance can hold wait their turn, and a cancelled one leaves the queue', async () => {
  const engine = await createEngine();
  const gate = deferred();
  const started = { count: 0 };
  // 1 GiB ceilings: three per instance, eight instances: 24 in flight, the rest wait.
  const runs = Array.from({ length: 26 }, () => heldRun(engine, gate, started));
  const controller = new AbortController();
  const cancelled = heldRun(engine, gate, started, controller.signal);
  await until(() => started.count === 24);
  await sleep(20);
  assert.equal(started.count, 24);
  assert.equal(instancesOf(engine), 8);
  controller.abort();
  assert.deepEqual((await cancelled).error, { kind: 'Cancelled', message: 'the run was cancelled' });
  gate.resolve();
  const outcomes = await Promise.all(runs);
  assert.deepEqual(outcomes.map((o) => o.result), Array(26).fill('done'));
  assert.equal(started.count, 26);
  assert.equal(instancesOf(engine), 1);
});
