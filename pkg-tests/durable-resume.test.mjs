// Resuming a run over a store its first attempt already changed (docs/durable.md): whatever prefix
// of the journal was kept and whatever batches had landed, the resumed run ends with the result
// and the files of an uninterrupted run, and makes no answered call again. A tool declared
// `idempotent: false` whose call went out unanswered stops a resume unless the host allows it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, directoryStore, memoryStore } from '../pkg/index.js';
import { tree } from './helpers.mjs';
import { ARGS, PROMPT, RESULT, SEED_FILES, WRITTEN, modelReply, probePack } from './durable/fixture.mjs';

const engine = await createEngine();

/** A model answering as the fixture's, counting its calls. */
function countingModel(counter) {
  return async (request) => {
    counter.calls++;
    return modelReply(request);
  };
}

const probe = (counter, tool) => probePack(() => { counter.tools++; }, tool);

function freshDir() {
  const dir = mkdtempSync(join(tmpdir(), 'runvil-resume-'));
  return dir;
}

async function seeded(dir) {
  const store = directoryStore(dir);
  await store.open();
  await store.commit(Object.entries(SEED_FILES).map(([path, text]) => ({ op: 'write', path, data: new TextEncoder().encode(text) })));
  return store;
}

test('a run stopped after any entry resumes to the uninterrupted result and files, paying no answered call again', async () => {
  const whole = { calls: 0, tools: 0 };
  const wholeDir = freshDir();
  const kept = [];
  const base = await engine.run(PROMPT, {
    args: ARGS, seed: 7, models: { default: countingModel(whole) }, packs: [probe(whole)],
    store: await seeded(wholeDir), record: (e) => { kept.push(e); },
  });
  assert.equal(base.ok, true, JSON.stringify(base.error));
  assert.equal(base.result, RESULT);
  const final = tree(wholeDir);
  assert.deepEqual(final, { 'arms/': true, ...WRITTEN, 'keep.txt': SEED_FILES['keep.txt'] });

  for (let cut = 1; cut < kept.length; cut++) {
    const dir = freshDir();
    const store = await seeded(dir);
    const first = { calls: 0, tools: 0 };
    const log = [];
    // The first attempt stops when entry `cut` should be kept (the entry is lost); batches whose
    // contents follow from the entries before it may already be in the store.
    const stopped = await engine.run(PROMPT, {
      args: ARGS, seed: 7, models: { default: countingModel(first) }, packs: [probe(first)], store,
      record: (e) => {
        if (log.length === cut) throw new Error('killed');
        log.push(e);
      },
    });
    assert.equal(stopped.ok, cut === kept.length - 1, `cut ${cut}`); // the last entry lost is `end`
    const answeredBefore = log.filter((e) => e.kind === 'model').length;
    const again = { calls: 0, tools: 0 };
    const resumed = await engine.run(PROMPT, {
      models: { default: countingModel(again) }, packs: [probe(again)], store: directoryStore(dir),
      resume: log, record: (e) => { log.push(e); },
    });
    assert.deepEqual([resumed.ok, resumed.result], [true, base.result], `cut ${cut}: ${JSON.stringify(resumed.error)}`);
    assert.deepEqual(tree(dir), final, `cut ${cut}: the store`);
    const answered = log.filter((e) => e.kind === 'model').length;
    assert.equal(answered, whole.calls, `cut ${cut}: one model entry per call`);
    // No answered call is made again; the calls in flight when the first attempt stopped are.
    assert.equal(again.calls, whole.calls - answeredBefore, `cut ${cut}: calls made again`);
    assert.ok(first.calls - answeredBefore <= 3, `cut ${cut}: at most the fanout's 3 calls were in flight`);
    // A finished journal replays into the final store and leaves it as it is.
    const replayed = await engine.run(PROMPT, { replay: log, store: directoryStore(dir) });
    assert.equal(replayed.result, base.result, JSON.stringify(replayed.error));
    assert.deepEqual(tree(dir), final, `cut ${cut}: the store after a replay`);
  }
});

test('a resume refuses to make a non-idempotent call again unless told to, naming the tool', async () => {
  const counter = { calls: 0, tools: 0 };
  const src = `---\nuses: [probe]\n---\n# T\n\n## Main\n\n\`\`\`lua\nlocal a = tools.call('probe/look', { q = 'pay' })\nreturn a\n\`\`\`\n`;
  const log = [];
  const stopped = await engine.run(src, {
    packs: [probe(counter, { idempotent: false })],
    record: (e) => {
      if (e.kind === 'tool') throw new Error('killed'); // the call went out; its answer is lost
      log.push(e);
    },
  });
  assert.equal(stopped.ok, false);
  assert.equal(counter.tools, 1);
  assert.deepEqual(log.map((e) => e.kind ?? 'header').filter((k) => k !== 'clock'), ['header', 'store-open', 'call']);
  assert.equal(log[0].packs.find((p) => p.name === 'probe').tools[0].idempotent, false);
  const refused = await engine.run(src, { packs: [probe(counter, { idempotent: false })], resume: log, record: (e) => log.push(e) });
  const count = log.length;
  assert.deepEqual(refused.error, {
    kind: 'Tool',
    message: `the run was not resumed: the tool probe/look is not idempotent and its call (chain 0 #2 in section 'Main', with {"q":"pay"}) went out without an answer when the run stopped; check whether it took effect, then resume with resumeInFlight: 'retry' to make it again`,
  });
  assert.equal(counter.tools, 1, 'nothing was called');
  assert.equal(log.length, count, 'nothing was recorded');
  const before = log.length;
  const retried = await engine.run(src, {
    packs: [probe(counter, { idempotent: false })], resume: log, resumeInFlight: 'retry', record: (e) => log.push(e),
  });
  assert.match(retried.result, /found pay/);
  assert.equal(counter.tools, 2);
  assert.deepEqual(log.slice(before - 1).map((e) => e.kind), ['call', 'tool', 'end']);
  // An idempotent tool (the default) logs no `call` entry and is made again silently.
  const plain = [];
  await engine.run(src, { packs: [probe(counter)], record: (e) => plain.push(e) });
  assert.equal(plain.some((e) => e.kind === 'call'), false);
  await assert.rejects(engine.run(src, { resumeInFlight: 'yes' }), { name: 'TypeError', message: "engine.run: resumeInFlight must be 'refuse' or 'retry' (got a string)" });
});

test('a batch goes out only after the entries it follows from are recorded', async () => {
  const src = `# T\n\n## Main\n\n\`\`\`lua\nstore.write('t.txt', tostring(sys.now))\n\`\`\`\n`;
  const order = [];
  const store = memoryStore();
  const commit = store.commit.bind(store);
  store.commit = async (changes) => { order.push('commit'); return commit(changes); };
  await engine.run(src, { store, record: async (e) => { await new Promise((r) => setTimeout(r, 5)); order.push(e.kind ?? 'header'); } });
  assert.deepEqual(order.slice(-3), ['clock', 'commit', 'end']);
});
