// models.loop ships only the new records of a conversation across the wasm boundary each round
// (js/core/conversations.js, docs/bridge.md "Conversations"); the model function still receives the
// whole history. These tests hold the requests to exactly what the whole history is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from '../pkg/index.js';
import { createConversations } from '../pkg/core/conversations.js';

const engine = await createEngine();

const GRAB = { name: 'grab', description: 'Grab a value', parameters: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] } };

function loopPrompt(rounds, { heading = 'Main', user = 'go' } = {}) {
  return `---\nmax_tool_iterations: ${rounds + 5}\n---\n# Loop\n\n## ${heading}\n\n\`\`\`lua\n` +
    `tools.offer_local('grab', 'Grab a value', { value = 'string' }, function(args) return 'grabbed ' .. args.value end)\n` +
    `messages:user('${user}')\nreturn models.loop()\n\`\`\`\n`;
}

/** The records a loop of `calls` grab calls (values v1, v2, ...) holds after them. */
function history(calls, user = 'go', prefix = 'c') {
  const records = [{ content: user, role: 'user' }];
  for (let i = 1; i <= calls; i++) {
    records.push({ content: '', role: 'assistant', tool_calls: [{ arguments: { value: `v${i}` }, id: `${prefix}${i}`, name: 'grab' }] });
    records.push({ content: `grabbed v${i}`, role: 'tool', tool_call_id: `${prefix}${i}` });
  }
  return records;
}

/** A model that calls grab once per round until round `rounds`, then answers 'done'. */
function grabModel(rounds, seen, prefix = 'c') {
  let n = 0;
  return async (request) => {
    seen?.(request, n);
    n += 1;
    return n < rounds
      ? { content: '', tool_calls: [{ id: `${prefix}${n}`, name: 'grab', arguments: { value: `v${n}` } }], finish_reason: 'tool_calls' }
      : { content: 'done', finish_reason: 'stop' };
  };
}

test('a long loop: every request is exactly the whole history, in fresh arrays', async () => {
  const ROUNDS = 150;
  const requests = [];
  const o = await engine.run(loopPrompt(ROUNDS), { seed: 1, models: { default: grabModel(ROUNDS, (r) => requests.push(r)) } });
  assert.deepEqual(o, { ok: true, result: 'done', seed: '1' });
  assert.equal(requests.length, ROUNDS);
  for (const [k, r] of requests.entries()) {
    assert.deepEqual(r.messages, history(k), `round ${k + 1}`);
    assert.deepEqual(r.tools, [GRAB]);
    assert.equal(r.turn, k + 1);
    assert.equal(r.section, 'Main');
    assert.equal(r.role, 'default');
    assert.deepEqual(r.spec, {});
    assert.equal(r.chain, '0');
    assert.equal(r.entry, 1);
    assert.deepEqual(Object.keys(r).filter((key) => key !== 'emit' && key !== 'signal'), ['chain', 'entry', 'messages', 'role', 'section', 'spec', 'tools', 'turn']);
  }
  // Each round hands out its own arrays (records are shared, frozen).
  assert.notEqual(requests[1].messages, requests[2].messages);
  assert.notEqual(requests[1].tools, requests[2].tools);
  assert.equal(requests[1].messages[0], requests[2].messages[0]);
});

test('a model function that changes its request cannot change what later rounds see', async () => {
  const ROUNDS = 6;
  const requests = [];
  const outcomes = [];
  // A sloppy-mode function (the Function constructor makes one): a write to a frozen record is ignored.
  const sloppyWrite = new Function('m', 'm.content = "changed"; m.extra = 1; delete m.role; return m.content');
  const inner = grabModel(ROUNDS, (r) => requests.push(structuredClone({ messages: r.messages, tools: r.tools })));
  const model = async (request) => {
    const reply = await inner(request);
    const given = [...request.messages];
    // Everything a model function might do to what it was given:
    request.messages.push({ role: 'user', content: 'injected' });
    request.messages.reverse();
    request.tools?.push({ name: 'evil', description: '', parameters: {} });
    delete request.turn;
    request.spec.model = 'changed';
    for (const m of given) {
      // Strict mode (this module): a change to a record throws, so it cannot happen silently.
      assert.throws(() => { m.content = 'changed'; }, TypeError);
      if (m.tool_calls) {
        assert.throws(() => { m.tool_calls[0].arguments.value = 'changed'; }, TypeError);
        assert.throws(() => { m.tool_calls.pop(); }, TypeError);
      }
      outcomes.push(sloppyWrite(m));
    }
    return reply;
  };
  const o = await engine.run(loopPrompt(ROUNDS), { seed: 2, models: { default: model } });
  assert.deepEqual(o, { ok: true, result: 'done', seed: '2' });
  assert.equal(requests.length, ROUNDS);
  for (const [k, r] of requests.entries()) {
    assert.deepEqual(r, { messages: history(k), tools: [GRAB] }, `round ${k + 1}`);
  }
  assert.ok(outcomes.length > 0 && outcomes.every((c) => c !== 'changed'));
});

test('a model function that copies a record may change its copy', async () => {
  const requests = [];
  const model = grabModel(4, (r) => {
    requests.push(r.messages.length);
    const copy = r.messages.map((m) => ({ ...m, content: `${m.content}!` }));
    assert.equal(copy[0].content, 'go!');
  });
  const o = await engine.run(loopPrompt(4), { seed: 3, models: { default: model } });
  assert.deepEqual([o.ok, o.result], [true, 'done']);
  assert.deepEqual(requests, [1, 3, 5, 7]);
});

test('two conversations interleaved in tasks each see only their own history', async () => {
  const ROUNDS = 12;
  const src = `---\nmax_tool_iterations: ${ROUNDS + 5}\n---\n# T\n\n## Main\n\n\`\`\`lua\n` +
    `local a, b = tasks.spawn('## A'), tasks.spawn('## B')\nlocal rs = tasks.join({ a, b })\nreturn rs[1].text .. ' ' .. rs[2].text\n\`\`\`\n\n` +
    ['A', 'B'].map((h) => `## ${h}\n\n\`\`\`lua\ntools.offer_local('grab', 'Grab a value', { value = 'string' }, function(args) return 'grabbed ' .. args.value end)\n` +
      `messages:user('go ${h}')\nreturn models.loop()\n\`\`\`\n`).join('\n');
  const order = [];
  const bySection = { A: [], B: [] };
  const counters = { A: 0, B: 0 };
  const model = async (request) => {
    const s = request.section;
    order.push(s);
    bySection[s].push(request.messages);
    // Let the other task's round run before this one answers.
    await new Promise((resolve) => setTimeout(resolve, 1));
    const n = ++counters[s];
    return n < ROUNDS
      ? { content: '', tool_calls: [{ id: `${s}${n}`, name: 'grab', arguments: { value: `v${n}` } }], finish_reason: 'tool_calls' }
      : { content: `done ${s}`, finish_reason: 'stop' };
  };
  const o = await engine.run(src, { seed: 4, models: { default: model } });
  assert.deepEqual(o, { ok: true, result: 'done A done B', seed: '4' });
  // The rounds did interleave.
  assert.ok(order.slice(0, 6).includes('A') && order.slice(0, 6).includes('B'), order.join(''));
  for (const s of ['A', 'B']) {
    assert.equal(bySection[s].length, ROUNDS);
    for (const [k, messages] of bySection[s].entries()) assert.deepEqual(messages, history(k, `go ${s}`, s), `${s} round ${k + 1}`);
  }
});

test('a second loop in the same entry continues the conversation', async () => {
  const src = `# T\n\n## Main\n\n\`\`\`lua\n` +
    `tools.offer_local('grab', 'Grab a value', { value = 'string' }, function(args) return 'grabbed ' .. args.value end)\n` +
    `messages:user('go')\nlocal first = models.loop()\nmessages:user('again')\nreturn first .. ' ' .. models.loop()\n\`\`\`\n`;
  const requests = [];
  const replies = [
    { content: '', tool_calls: [{ id: 'c1', name: 'grab', arguments: { value: 'v1' } }], finish_reason: 'tool_calls' },
    { content: 'one', finish_reason: 'stop' },
    { content: '', tool_calls: [{ id: 'c2', name: 'grab', arguments: { value: 'v2' } }], finish_reason: 'tool_calls' },
    { content: 'two', finish_reason: 'stop' },
  ];
  const model = async (request) => {
    requests.push(request);
    return replies[requests.length - 1];
  };
  const o = await engine.run(src, { seed: 5, models: { default: model } });
  assert.deepEqual(o, { ok: true, result: 'one two', seed: '5' });
  const h = history(2);
  const expected = [
    h.slice(0, 1),
    h.slice(0, 3),
    [...h.slice(0, 3), { content: 'one', role: 'assistant' }, { content: 'again', role: 'user' }],
    [...h.slice(0, 3), { content: 'one', role: 'assistant' }, { content: 'again', role: 'user' }, ...h.slice(3)],
  ];
  assert.deepEqual(requests.map((r) => r.messages), expected);
  for (const r of requests) assert.deepEqual(r.tools, [GRAB]);
});

test('a loop without tools sends no tools key', async () => {
  const requests = [];
  const o = await engine.run('# T\n\n## Main\n\n```lua\nmessages:user(\'hi\')\nreturn models.loop()\n```\n', {
    seed: 6,
    models: { default: async (r) => { requests.push(r); return { content: 'hello', finish_reason: 'stop' }; } },
  });
  assert.deepEqual([o.ok, o.result], [true, 'hello']);
  assert.equal('tools' in requests[0], false);
  assert.deepEqual(requests[0].messages, [{ content: 'hi', role: 'user' }]);
});

test('the conversation copies: out-of-step requests are refused, ended ones dropped', () => {
  const c = createConversations();
  const head = ['r', '{}', 'S', 1, '0.2', 4];
  const r1 = c.request(7, 0, '[{"content":"a","role":"user"}]', 'null', ...head);
  assert.deepEqual(r1, { chain: '0.2', entry: 4, messages: [{ content: 'a', role: 'user' }], role: 'r', section: 'S', spec: {}, turn: 1 });
  assert.throws(() => c.request(7, 0, '[]', undefined, ...head), { message: 'conversation 7 is out of step: the wrapper holds 1 records, the engine expected 0' });
  const r2 = c.request(7, 1, '[{"content":"b","role":"assistant"}]', '[{"name":"t"}]', ...head);
  assert.deepEqual(r2.messages.map((m) => m.content), ['a', 'b']);
  assert.deepEqual(r2.tools, [{ name: 't' }]);
  assert.deepEqual(c.request(7, 2, '[]', undefined, ...head).tools, [{ name: 't' }]);
  assert.equal(c.size, 1);
  c.end(7);
  assert.equal(c.size, 0);
});
