// Resuming a run over a store its first attempt already changed (docs/durable.md): whatever prefix
// of the journal was kept and whatever batches had landed, the resumed run ends with the result
// and the files of an uninterrupted run, and makes no answered call again. A tool declared
// `idempotent: false` whose call went out unanswered stops a resume unless the host allows it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, directoryStore, memoryStore } from '../pkg/index.js';

const engine = await createEngine();

// A fanout, a call, a tool loop, appends, and a path that is a directory and then a file.
const PROMPT = `---
uses: [probe]
---
# Durable

## Main

\`\`\`lua
store.write('d/x.txt', 'first')
store.append('log.txt', 'start;')
local intro = call('## Intro', args)
local arms = tasks.fanout('### Arm', { 'a', 'b', 'c' })
local parts = {}
for _, r in ipairs(arms) do parts[#parts + 1] = r.text; store.append('log.txt', 'arm;') end
return intro .. '|' .. table.concat(parts, ',')
\`\`\`

### Arm

\`\`\`lua
local text = models.infer('arm ' .. item)
store.write('arms/' .. item .. '.txt', text)
\`\`\`

\`\`\`lua
store.append('arms/' .. item .. '.txt', ';')
return store.read('arms/' .. item .. '.txt')
\`\`\`

## Intro

\`\`\`lua
local said = models.infer('intro ' .. args)
store.delete('d/x.txt')
store.delete('d')
store.write('d', 'now a file: ' .. said)
store.append('log.txt', 'intro;')
return said
\`\`\`

## Loop

\`\`\`lua
tools.offer('probe/look')
messages:user('look it up')
local answer = models.loop()
store.write('loop.txt', answer)
store.delete('old.txt')
return answer
\`\`\`
`;

/** A model that answers from its request, counting its calls (a tool call on the loop's first round). */
function countingModel(counter) {
  return async (request) => {
    counter.calls++;
    const last = request.messages.at(-1);
    if (request.section === 'Loop' && last.role === 'user') {
      return { content: '', tool_calls: [{ id: 't1', name: 'probe_look', arguments: { q: 'x' } }], finish_reason: 'tool_calls' };
    }
    return { content: `re:${String(last.content).slice(0, 20)}`, finish_reason: 'stop' };
  };
}

const probe = (counter, options = {}) => ({
  name: 'probe',
  description: 'Looks things up.',
  tools: [{
    name: 'look',
    description: 'Look a thing up.',
    parameters: { type: 'object', properties: { q: { type: 'string' } } },
    ...options,
    call: async (a) => {
      counter.tools++;
      return `found ${a.q}`;
    },
  }],
});

function tree(dir, prefix = '') {
  const out = {};
  for (const name of readdirSync(join(dir, prefix)).sort()) {
    const rel = prefix ? `${prefix}/${name}` : name;
    if (statSync(join(dir, rel)).isDirectory()) Object.assign(out, { [`${rel}/`]: true }, tree(dir, rel));
    else out[rel] = readFileSync(join(dir, rel), 'utf8');
  }
  return out;
}

const seedFiles = { 'old.txt': 'old', 'keep.txt': 'kept' };
const PROMPT_WITH_LOOP = PROMPT.replace("local intro = call('## Intro', args)", "local intro = call('## Intro', args) .. call('## Loop')");

function freshDir() {
  const dir = mkdtempSync(join(tmpdir(), 'runvil-resume-'));
  return dir;
}

async function seeded(dir) {
  const store = directoryStore(dir);
  await store.open();
  await store.commit(Object.entries(seedFiles).map(([path, text]) => ({ op: 'write', path, data: new TextEncoder().encode(text) })));
  return store;
}

test('a run stopped after any entry resumes to the uninterrupted result and files, paying no answered call again', async () => {
  const whole = { calls: 0, tools: 0 };
  const wholeDir = freshDir();
  const kept = [];
  const base = await engine.run(PROMPT_WITH_LOOP, {
    args: 'go', seed: 7, models: { default: countingModel(whole) }, packs: [probe(whole)],
    store: await seeded(wholeDir), record: (e) => { kept.push(e); },
  });
  assert.equal(base.ok, true, JSON.stringify(base.error));
  const final = tree(wholeDir);
  assert.equal(final.d, 'now a file: re:intro go');
  assert.equal(final['log.txt'], 'start;intro;arm;arm;arm;');
  assert.equal(final['old.txt'], undefined);

  for (let cut = 1; cut < kept.length; cut++) {
    const dir = freshDir();
    const store = await seeded(dir);
    const first = { calls: 0, tools: 0 };
    const log = [];
    // The first attempt stops when entry `cut` should be kept (the entry is lost); batches whose
    // contents follow from the entries before it may already be in the store.
    const stopped = await engine.run(PROMPT_WITH_LOOP, {
      args: 'go', seed: 7, models: { default: countingModel(first) }, packs: [probe(first)], store,
      record: (e) => {
        if (log.length === cut) throw new Error('killed');
        log.push(e);
      },
    });
    assert.equal(stopped.ok, cut === kept.length - 1, `cut ${cut}`); // the last entry lost is `end`
    const answeredBefore = log.filter((e) => e.kind === 'model').length;
    const again = { calls: 0, tools: 0 };
    const resumed = await engine.run(PROMPT_WITH_LOOP, {
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
    const replayed = await engine.run(PROMPT_WITH_LOOP, { replay: log, store: directoryStore(dir) });
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
