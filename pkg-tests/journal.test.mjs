// Record, replay and resume (docs/journal.md), against the built package: a recorded run replays
// to the same outcome, store and events with no model, tool or operator, whatever order its
// concurrent arms ran in; a changed prompt, args or a missing answer is a Determinism divergence;
// a resumed run makes only the calls its journal does not answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine, memoryStore, scriptedModel, userInputPack } from '../pkg/index.js';
import { mulberry32 } from './helpers.mjs';

const engine = await createEngine();

/** Events as compared across a record and its replay: their `time` aside. */
const untimed = (events) => events.map(({ time, ...rest }) => rest);

const files = async (store) => Object.fromEntries(await Promise.all((await store.list()).map(async (p) => [p, await store.read(p)])));

const lookPack = (calls) => ({
  name: 'probe',
  description: 'Looks things up.',
  tools: [
    {
      name: 'look',
      description: 'Look a thing up.',
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
      call: async (args, ctx) => {
        calls.push([args.q, ctx.chain, ctx.entry]);
        return `found ${args.q}`;
      },
    },
  ],
});

const TOOL_LOOP = `---\nuses: [probe]\n---\n# T\n\n## Main\n\n\`\`\`lua\ntools.offer("probe/look")\nmessages:user("look it up")\nreturn models.loop() .. "|" .. messages[3].content\n\`\`\`\n`;
const toolModel = () =>
  scriptedModel([
    { content: '', tool_calls: [{ id: 'c1', name: 'probe_look', arguments: { q: 'rivers' } }], finish_reason: 'tool_calls' },
    { content: 'rivers found', finish_reason: 'stop', usage: { input_tokens: 5, output_tokens: 2 } },
  ]);

test('a tool loop replays with no model and no tool: same outcome, same events', async () => {
  const calls = [];
  const events = [];
  const recorded = await engine.run(TOOL_LOOP, { models: { default: toolModel() }, packs: [lookPack(calls)], record: true, onEvent: (e) => events.push(e) });
  assert.equal(recorded.ok, true, JSON.stringify(recorded.error));
  assert.match(recorded.result, /^rivers found\|/);
  assert.deepEqual(calls, [['rivers', '0', 1]], 'the tool ctx names its chain and entry');
  const [header, ...entries] = recorded.journal;
  assert.equal(header.journal, 'runvil-journal');
  assert.equal(header.version, 1);
  assert.deepEqual(header.packs, [{ name: 'probe', description: 'Looks things up.', tools: [{ name: 'look', description: 'Look a thing up.', parameters: { type: 'object', properties: { q: { type: 'string' } } } }] }]);
  assert.deepEqual(entries.map((e) => [e.kind, e.chain, e.seq]), [
    ['store-open', undefined, undefined],
    ['clock', '0', 1],
    ['role', undefined, undefined],
    ['model', '0', 2],
    ['tool', '0', 3],
    ['model', '0', 4],
    ['end', undefined, undefined],
  ]);
  assert.equal(JSON.stringify(recorded.journal), JSON.stringify(JSON.parse(JSON.stringify(recorded.journal))), 'a journal is JSON');

  const replayEvents = [];
  const replayed = await engine.run(TOOL_LOOP, { replay: JSON.parse(JSON.stringify(recorded.journal)), onEvent: (e) => replayEvents.push(e) });
  assert.deepEqual(replayed, { ok: true, result: recorded.result, seed: recorded.seed, usage: recorded.usage });
  assert.equal(calls.length, 1, 'replay called no tool');
  assert.deepEqual(untimed(replayEvents), untimed(events));
});

test('fanout arms with random model latencies replay whatever their interleaving', async () => {
  const src = `# F\n\n## Main\n\n\`\`\`lua\nlocal rs = tasks.fanout('### Arm', { 1, 2, 3, 4, 5, 6 })\nlocal out = {}\nfor i, r in ipairs(rs) do out[i] = r.text end\nreturn table.concat(out, ',')\n\`\`\`\n\n### Arm\n\n\`\`\`lua\nlocal a = models.infer('first ' .. item)\nlocal b = models.infer('second ' .. item)\nreturn a .. '+' .. b\n\`\`\`\n`;
  const random = mulberry32(7);
  const order = [];
  const model = async (request) => {
    const text = request.messages.at(-1).content;
    await new Promise((r) => setTimeout(r, Math.floor(random() * 25)));
    order.push(text);
    return { content: `<${text}>`, finish_reason: 'stop' };
  };
  const events = [];
  const recorded = await engine.run(src, { models: { default: model }, record: true, seed: 3, onEvent: (e) => events.push(e) });
  assert.equal(recorded.ok, true, JSON.stringify(recorded.error));
  const arms = new Set(recorded.journal.filter((e) => e.kind === 'model').map((e) => e.chain));
  assert.equal(arms.size, 6, 'each arm is its own chain');
  const inOrder = [...order].sort((a, b) => a.localeCompare(b));
  assert.notDeepEqual(order, inOrder, 'the recorded arms interleaved');

  // Shuffle the recorded entries: a replay finds each answer by chain and seq, not by position.
  const [header, ...rest] = recorded.journal;
  const shuffled = [header, ...rest.reverse()];
  const replayEvents = [];
  const replayed = await engine.run(src, { replay: shuffled, onEvent: (e) => replayEvents.push(e) });
  assert.deepEqual(replayed, { ok: true, result: recorded.result, seed: '3' });
  const byArm = (list) => untimed(list).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  assert.deepEqual(byArm(replayEvents), byArm(events));
});

test('input.ask through the user-input Pack replays without the operator', async () => {
  const src = '---\nuses: [user-input]\n---\n# Ask\n\n## Main\n\n```lua\nlocal a = input.ask()\nlocal b = input.ask()\nreturn a .. "+" .. b\n```\n';
  const answers = ['yes', 'no'];
  let asked = 0;
  const recorded = await engine.run(src, { packs: [userInputPack({ ask: () => answers[asked++] })], record: true });
  assert.equal(recorded.result, 'yes+no');
  assert.deepEqual(recorded.journal.filter((e) => e.kind === 'tool').map((e) => [e.tool, e.output]), [['user-input/ask', 'yes'], ['user-input/ask', 'no']]);
  const replayed = await engine.run(src, { replay: recorded.journal });
  assert.equal(replayed.result, 'yes+no');
  assert.equal(asked, 2, 'the operator was asked only in the recorded run');
});

test('store reads and writes: the replay sees the recorded store and ends with the same files', async () => {
  const src = `# S\n\n## Main\n\n\`\`\`lua\nlocal text = store.read('notes/in.md')\nstore.write('out.md', text .. ' / ' .. models.infer('summary'))\nstore.delete('old.txt')\nreturn store.read('out.md')\n\`\`\`\n`;
  const initial = { 'notes/in.md': 'the notes', 'old.txt': 'old', 'raw.bin': new Uint8Array([0xff, 0x00]) };
  const store = memoryStore(initial);
  const recorded = await engine.run(src, { models: { default: scriptedModel(['short']) }, store, record: true });
  assert.equal(recorded.result, 'the notes / short');
  const open = recorded.journal.find((e) => e.kind === 'store-open');
  assert.deepEqual(open.listing.files.find((f) => f.path === 'raw.bin').data, { base64: '/wA=' }, 'bytes are kept as base64');

  // Replaying into a copy of the recorded run's starting store ends with its final files.
  const again = memoryStore(initial);
  const replayed = await engine.run(src, { replay: recorded.journal, store: again });
  assert.equal(replayed.result, recorded.result);
  assert.deepEqual(await files(again), await files(store));
  // Without a store the replay still sees the recorded files (its changes land nowhere).
  assert.equal((await engine.run(src, { replay: recorded.journal })).result, recorded.result);
});

test('the clock the prompt reads (sys.now, sys.when) is the recorded one in replay', async () => {
  const src = '# C\n\n## Main\n\n```lua\nlocal a = sys.now\nlocal m = models.infer("x")\nreturn sys.when .. " " .. a .. " " .. sys.now .. " " .. m\n```\n';
  const recorded = await engine.run(src, {
    models: { default: async () => (await new Promise((r) => setTimeout(r, 1100)), { content: 'm' }) },
    record: true,
  });
  assert.equal(recorded.ok, true, JSON.stringify(recorded.error));
  const [when, first, second] = recorded.result.split(' ');
  assert.notEqual(first, second, 'the recorded run read two different times');
  assert.equal(when, first);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal((await engine.run(src, { replay: recorded.journal })).result, recorded.result);
});

test('a failing run replays to the same error', async () => {
  const src = '# E\n\n## Main\n\n```lua\nlocal m = models.infer("x")\nerror("stopped after " .. m)\n```\n';
  const recorded = await engine.run(src, { models: { default: scriptedModel(['one']) }, record: true, seed: 9 });
  assert.equal(recorded.ok, false);
  const { journal, ...outcome } = recorded;
  assert.deepEqual(journal.at(-1), { kind: 'end', ok: false, error: { kind: outcome.error.kind, message: outcome.error.message } });
  assert.deepEqual(await engine.run(src, { replay: journal }), outcome);

  // A model function that failed is recorded as its failure.
  const failing = await engine.run(src, { models: { default: async () => { throw new Error('provider down'); } }, record: true });
  assert.equal(failing.journal.find((e) => e.kind === 'model').error, 'provider down');
  const { journal: j2, ...o2 } = failing;
  assert.deepEqual(await engine.run(src, { replay: j2 }), o2);
});

test('divergences end the run with Determinism, naming what differs', async () => {
  const src = '# D\n\n## Main\n\n```lua\nreturn models.infer("one " .. args) .. models.infer("two")\n```\n\n## Later\n\nprose\n';
  const recorded = await engine.run(src, { models: { default: scriptedModel(['a', 'b']) }, record: true, args: 'x', seed: 1 });
  assert.equal(recorded.result, 'ab');
  const error = async (source, options) => (await engine.run(source, options)).error;

  assert.deepEqual(await error(src.replace('prose', 'other prose'), { replay: recorded.journal }), {
    kind: 'Determinism',
    message: "the prompt is not the one the journal recorded: section 'Later' changed",
  });
  assert.deepEqual(await error(src, { replay: recorded.journal, args: 'y' }), {
    kind: 'Determinism',
    message: `the run's argument string "y" is not the one the journal recorded, "x"`,
  });
  assert.deepEqual(await error(src, { replay: recorded.journal, seed: 2 }), {
    kind: 'Determinism',
    message: "the run's seed 2 is not the one the journal recorded, 1",
  });
  const missing = recorded.journal.filter((e) => !(e.kind === 'model' && e.seq === 3));
  assert.deepEqual(await error(src, { replay: missing }), {
    kind: 'Determinism',
    message: "the run diverged from the journal at chain 0 #3 in section 'Main': the journal has no answer for a model call (role default, turn 1, 1 message)",
  });
  // A recorded answer to another request: the run asked for something else at that place.
  const changed = recorded.journal.map((e) => (e.kind === 'model' && e.seq === 2 ? { ...e, request: { ...e.request, digest: '0' } } : e));
  assert.deepEqual(await error(src, { replay: changed }), {
    kind: 'Determinism',
    message: "the run diverged from the journal at chain 0 #2 in section 'Main': the journal recorded a model call (role default, turn 1, 1 message), the run asked for a model call (role default, turn 1, 1 message) with other messages instead",
  });
  // A pcall cannot catch a divergence.
  const caught = '# D\n\n## Main\n\n```lua\nlocal ok = pcall(models.infer, "one x")\nreturn "went on"\n```\n';
  const rec2 = await engine.run(caught, { models: { default: scriptedModel(['a']) }, record: true });
  const edited = rec2.journal.map((e) => (e.kind === 'model' ? { ...e, turn: 2 } : e));
  assert.equal((await error(caught, { replay: edited })).kind, 'Determinism');
});

test('resume from a prefix makes only the remaining model calls and ends the same', async () => {
  const src = `# R\n\n## Main\n\n\`\`\`lua\nlocal out = {}\nfor i = 1, 4 do out[i] = models.infer("step " .. i) end\nstore.write("log.md", table.concat(out, ","))\nreturn store.read("log.md")\n\`\`\`\n`;
  let calls = 0;
  const model = async (request) => {
    calls += 1;
    return { content: request.messages[0].content.toUpperCase() };
  };
  const store = memoryStore({ 'seed.md': 'seed' });
  const full = await engine.run(src, { models: { default: model }, store, record: true, seed: 5 });
  assert.equal(full.result, 'STEP 1,STEP 2,STEP 3,STEP 4');
  assert.equal(calls, 4);

  // The run "died" after its second model answer (the clock reading is seq 1 of chain 0).
  const cut = full.journal.findIndex((e) => e.kind === 'model' && e.seq === 4);
  const soFar = full.journal.slice(0, cut);
  calls = 0;
  const appended = [];
  const resumedStore = memoryStore({ 'seed.md': 'seed' });
  const resumed = await engine.run(src, { resume: soFar, models: { default: model }, store: resumedStore, record: (e) => appended.push(e) });
  assert.deepEqual(resumed, { ok: true, result: full.result, seed: '5' });
  assert.equal(calls, 2, 'only the two unanswered calls were made');
  assert.deepEqual(appended.map((e) => [e.kind, e.seq]), [['model', 4], ['model', 5], ['end', undefined]]);
  assert.deepEqual(await files(resumedStore), await files(store));
  // The entries so far and what the resume recorded replay as the whole run.
  assert.equal((await engine.run(src, { replay: [...soFar, ...appended] })).result, full.result);
  // resume: [] is a fresh run that records everything.
  const fresh = [];
  assert.equal((await engine.run(src, { resume: [], models: { default: model }, record: (e) => fresh.push(e), seed: 5 })).result, full.result);
  assert.equal(fresh[0].journal, 'runvil-journal');
});

test('record as a function gets each entry in order, and an async one is awaited before the answer goes on', async () => {
  const src = '# W\n\n## Main\n\n```lua\nreturn models.infer("a") .. models.infer("b")\n```\n';
  const kept = [];
  let persisted = 0;
  const seenAtCall = [];
  const model = async (request) => {
    seenAtCall.push(persisted);
    return { content: request.messages[0].content };
  };
  const outcome = await engine.run(src, {
    models: { default: model },
    record: async (entry) => {
      await new Promise((r) => setTimeout(r, 15));
      kept.push(entry);
      persisted += 1;
    },
  });
  assert.deepEqual(outcome.result, 'ab');
  assert.equal(outcome.journal, undefined, 'record: fn does not put the journal on the outcome');
  assert.deepEqual(kept.map((e) => e.kind ?? 'header'), ['header', 'store-open', 'clock', 'role', 'model', 'model', 'end']);
  // A call goes out only once every entry before it has been kept (header, store listing, clock
  // reading, role binding; then the first answer).
  assert.deepEqual(seenAtCall, [4, 5]);

  // A record function that fails stops the run: nothing acts on an answer that was not kept.
  const stopped = await engine.run(src, { models: { default: model }, record: (e) => { if (e.kind === 'model') throw new Error('disk full'); } });
  assert.deepEqual(stopped.error, { kind: 'Cancelled', message: 'the run was stopped: the journal could not record an answer (disk full)' });
});

test('a value that is not a journal is a TypeError at engine.run', async () => {
  const src = '# M\n\n## Main\n\n```lua\nreturn 1\n```\n';
  const good = (await engine.run(src, { record: true })).journal;
  const cases = [
    [{ replay: {} }, 'engine.run: replay: a journal is an array of entries, the first its header (got an object)'],
    [{ replay: [] }, 'engine.run: replay: the journal is empty (it needs at least its header entry)'],
    [{ replay: [{}] }, "engine.run: replay: entry 0 is not a journal header (it needs journal: 'runvil-journal')"],
    [{ replay: [{ ...good[0], version: 2 }] }, 'engine.run: replay: the journal is version 2; this engine reads version 1'],
    [{ replay: [good[0], { kind: 'nope' }] }, 'engine.run: replay: entry 1 has an unknown kind "nope" (known: model, tool, clock, role, store-open, store-read, call, end)'],
    [{ replay: [good[0], { kind: 'clock', chain: 'x', seq: 1, ms: 1 }] }, `engine.run: replay: entry 1 (clock) needs a chain id like '0' or '0.2' (got "x")`],
    [{ replay: [good[0], { kind: 'clock', chain: '0', seq: 1, ms: 1 }, { kind: 'clock', chain: '0', seq: 1, ms: 2 }] }, 'engine.run: replay: entry 2 repeats 0 #1'],
    [{ resume: 'x' }, 'engine.run: resume: a journal is an array of entries, the first its header (got a string)'],
    [{ replay: good, resume: good }, 'engine.run: replay and resume exclude each other (resume replays its entries, then goes on live)'],
    [{ record: 'yes' }, 'engine.run: record must be true or a function (entry) => void | Promise<void> (got a string)'],
  ];
  for (const [options, message] of cases) {
    await assert.rejects(engine.run(src, options), (error) => error instanceof TypeError && error.message === message, message);
  }
  assert.equal((await engine.run(src, { replay: good })).result, '1');
});

test('core/journal.js exports the journal as one module, whatever modules hold its parts', async () => {
  // engine.js, the worker client and the CLI import these from core/journal.js, and may do so
  // with a dynamic import, so the set is pinned here.
  const journal = await import('../pkg/core/journal.js');
  assert.deepEqual(Object.keys(journal).sort(), [
    'JOURNAL_VERSION', 'checkJournal', 'createJournal', 'digest', 'finalState', 'journalMode', 'journalSeed', 'sourceDigest',
  ]);
  assert.equal(journal.JOURNAL_VERSION, 1);
  // A changed section is named by the digest's parts.
  const [a, b] = ['# T\n\n## A\n\nx\n', '# T\n\n## A\n\ny\n'].map(journal.sourceDigest);
  assert.notEqual(a.hash, b.hash);
  assert.deepEqual(a.parts.map((p) => p.name), ["the H1 body 'T'", "section 'A'"]);
  assert.equal(a.parts[0].hash, b.parts[0].hash);
  assert.notEqual(a.parts[1].hash, b.parts[1].hash);
  // The held batch of a resumed run: a deleted directory gives way to the file written in its place.
  assert.deepEqual(
    journal.finalState([
      { op: 'write', path: 'd/x', data: 'a' },
      { op: 'delete', path: 'd/x' },
      { op: 'delete', path: 'd' },
      { op: 'write', path: 'd', data: 'b' },
    ]),
    [{ op: 'delete', path: 'd/x' }, { op: 'delete', path: 'd' }, { op: 'write', path: 'd', data: 'b' }],
  );
});
