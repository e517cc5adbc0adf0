// What the wrapper does around every model call, against the built package (js/README.md, "Model
// events and usage"; docs/bridge.md): the request's `emit` with and without an observer, the
// `model_usage` events and the outcome's per-role totals, the errors a model function's throws
// become, and the run's observer, tracer and journal applying to a run that has them whatever the
// engine's earlier runs had.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createEngine } from '../pkg/index.js';
import { luaPrompt } from './helpers.mjs';

const engine = await createEngine();
const INFER = luaPrompt("return models.infer('q')");
const EMIT_TYPE_ERROR = (got) =>
  `request.emit: a model function reports events named model_<name> (got ${got})`;

/** A prompt declaring the roles `default`, `fast` and `broken`: `## Main` runs `lua`, `## Fast` and
 * `## Broken` answer one `models.infer` on their role. */
const twoRoles = (lua) =>
  `---\nmodels:\n  default: {}\n  fast: { model: f }\n  broken: {}\n---\n# T\n\n## Main\n\n\`\`\`lua\nmodels.use('default')\n${lua}\n\`\`\`\n\n## Fast\n\n\`\`\`lua\nmodels.use('fast')\nreturn models.infer('3')\n\`\`\`\n\n## Broken\n\n\`\`\`lua\nmodels.use('broken')\nreturn models.infer('5')\n\`\`\`\n`;

/** The run's events, their `time` checked and dropped. */
const untimed = (events) =>
  events.map(({ time, ...rest }) => {
    assert.equal(typeof time, 'number');
    return rest;
  });

for (const observed of [false, true]) {
  const how = observed ? 'with onEvent' : 'without onEvent';

  test(`request.emit refuses a name that is not model_<name>, ${how}`, async () => {
    for (const [name, got] of [
      ['retry', "a string 'retry'"],
      ['model_turn_started', "a string 'model_turn_started'"],
      ['model_turn_completed', "a string 'model_turn_completed'"],
      ['model_Bad', "a string 'model_Bad'"],
      [7, 'a number'],
    ]) {
      const outcome = await engine.run(INFER, {
        models: {
          default: async (request) => {
            request.emit(name, {});
            return { content: 'not reached' };
          },
        },
        ...(observed ? { onEvent: () => {} } : {}),
      });
      assert.deepEqual([outcome.ok, outcome.error?.kind, outcome.error?.message], [false, 'Model', EMIT_TYPE_ERROR(got)]);
    }
  });

  test(`usage is totalled per role in the outcome, ${how}`, async () => {
    const replies = [
      { content: 'a', usage: { input_tokens: 10, output_tokens: 2, cached_tokens: 4 } },
      // Counts that are not finite non-negative numbers are not added; the call still counts.
      { content: 'b', usage: { input_tokens: -1, output_tokens: Number.NaN, cached_tokens: '3', reasoning_tokens: 5 } },
      { content: 'c' },
      { content: 'd', usage: 'not an object' },
    ];
    const src = twoRoles("local a = models.infer('1')\nlocal b = models.infer('2')\nreturn a .. b .. call('## Fast') .. models.infer('4')");
    let i = 0;
    const events = [];
    const reply = async () => replies[i++];
    const outcome = await engine.run(src, {
      models: { default: reply, fast: reply, broken: reply },
      ...(observed ? { onEvent: (e) => events.push(e) } : {}),
    });
    assert.equal(outcome.result, 'abcd', JSON.stringify(outcome.error));
    assert.deepEqual(outcome.usage, {
      default: { calls: 2, input_tokens: 10, output_tokens: 2, cached_tokens: 4, reasoning_tokens: 5 },
    });
    assert.equal(Object.keys(outcome.usage).length, 1, 'a role whose replies had no usage has no totals');
    if (!observed) return;
    const used = untimed(events.filter((e) => e.event === 'model_usage'));
    assert.deepEqual(used, [
      {
        event: 'model_usage',
        type: 'model_usage',
        section: 'Main',
        role: 'default',
        turn: 1,
        usage: replies[0].usage,
        totals: { calls: 1, input_tokens: 10, output_tokens: 2, cached_tokens: 4, reasoning_tokens: 0 },
      },
      {
        event: 'model_usage',
        type: 'model_usage',
        section: 'Main',
        role: 'default',
        turn: 1,
        usage: replies[1].usage,
        totals: { calls: 2, input_tokens: 10, output_tokens: 2, cached_tokens: 4, reasoning_tokens: 5 },
      },
    ]);
    assert.deepEqual(Object.keys(used[0]), ['event', 'type', 'section', 'role', 'turn', 'usage', 'totals']);
    for (const e of events.filter((e) => e.event === 'model_usage')) {
      assert.equal(events[events.indexOf(e) + 1].event, 'model_turn_completed', 'model_usage comes just before its round completes');
    }
  });
}

test("request.emit's event joins the run's events with the request's section, role and turn", async () => {
  const events = [];
  const outcome = await engine.run(luaPrompt("messages:user('q')\nreturn models.loop()"), {
    models: {
      default: async (request) => {
        request.emit('model_retry', { attempt: 1, event: 'overridden', section: 'overridden' });
        // Fields that are not an object are dropped; the default is `{}`.
        request.emit('model_note', 'not an object');
        const { emit } = request;
        emit('model_detached');
        return { content: 'done' };
      },
    },
    onEvent: (e) => events.push(e),
  });
  assert.equal(outcome.result, 'done');
  const emitted = untimed(events.filter((e) => /^model_(retry|note|detached)$/.test(e.event)));
  assert.deepEqual(emitted, [
    { attempt: 1, event: 'model_retry', type: 'model_retry', section: 'Main', role: 'default', turn: 1 },
    { event: 'model_note', type: 'model_note', section: 'Main', role: 'default', turn: 1 },
    { event: 'model_detached', type: 'model_detached', section: 'Main', role: 'default', turn: 1 },
  ]);
  // The fields' own keys keep their place, their values give way to the request's.
  assert.deepEqual(Object.keys(emitted[0]), ['attempt', 'event', 'section', 'type', 'role', 'turn']);
  const started = events.findIndex((e) => e.event === 'model_turn_started');
  assert.ok(started >= 0 && started < events.indexOf(events.find((e) => e.event === 'model_retry')));
});

test('what a model function throws or answers becomes a Model error with a model-safe message', async () => {
  const cases = [
    [() => { throw 'thrown text'; }, 'thrown text'],
    [() => { throw new Error('sync boom'); }, 'sync boom'],
    [async () => { throw new Error('async boom'); }, 'async boom'],
    [() => Promise.reject(42), 'the model function threw a number, not an Error'],
    [() => ({ then: (_, reject) => reject(new TypeError('thenable boom')) }), 'thenable boom'],
    [async () => ({ content: 'x', usage: { get input_tokens() { throw new Error('usage getter'); } } }), 'usage getter'],
    [async () => ({ content: 1n }), "the model's reply is not a JSON object"],
    [async () => 'not an object', "the model's reply is not an object"],
  ];
  for (const [model, message] of cases) {
    const outcome = await engine.run(INFER, { models: { default: model } });
    assert.deepEqual([outcome.error?.kind, outcome.error?.message], ['Model', message], String(model));
  }
  const outcome = await engine.run(INFER, { models: { default: (request) => ({ content: `sync ${request.role}` }) } });
  assert.equal(outcome.result, 'sync default', 'a model function may answer without a promise');
});

test('a resolver is asked once per role and run; its model functions get the same request', async () => {
  const asked = [];
  const keys = [];
  const resolver = (role, spec) => {
    asked.push([role, spec]);
    if (role === 'broken') throw new Error('no such role');
    return async (request) => {
      keys.push(Object.keys(request));
      return { content: role, usage: { input_tokens: 1 } };
    };
  };
  const outcome = await engine.run(twoRoles("return models.infer('1') .. models.infer('2') .. call('## Fast')"), {
    models: (role, spec) => (role === 'broken' ? async () => ({ content: 'unused' }) : resolver(role, spec)),
  });
  assert.equal(outcome.result, 'defaultdefaultfast', JSON.stringify(outcome.error));
  assert.deepEqual(asked.map(([role]) => role).sort(), ['default', 'fast']);
  assert.deepEqual(asked.find(([role]) => role === 'fast')[1], { model: 'f' });
  assert.equal(keys.length, 3);
  for (const k of keys) assert.deepEqual(k, ['chain', 'entry', 'messages', 'role', 'section', 'spec', 'turn', 'signal', 'emit']);
  assert.deepEqual(outcome.usage, {
    default: { calls: 2, input_tokens: 2, output_tokens: 0, cached_tokens: 0, reasoning_tokens: 0 },
    fast: { calls: 1, input_tokens: 1, output_tokens: 0, cached_tokens: 0, reasoning_tokens: 0 },
  });
  // A resolver that throws binds no model to that role.
  const unmet = await engine.run(twoRoles("return 'unreached'"), { models: resolver });
  assert.deepEqual([unmet.error?.kind, unmet.error?.message], ['RequirementsUnmet', 'the environment cannot satisfy this prompt:\n- no model for role: broken']);
});

test("each run's observer, tracer and journal apply to its own model calls, whatever the runs before had", async () => {
  const model = async (request) => {
    request.emit('model_probe', { n: 1 });
    return { content: 'ok', usage: { input_tokens: 3, output_tokens: 1 } };
  };
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('t');
  const plain = () => engine.run(INFER, { models: { default: model } });
  const usage = { default: { calls: 1, input_tokens: 3, output_tokens: 1, cached_tokens: 0, reasoning_tokens: 0 } };

  assert.deepEqual((await plain()).usage, usage);
  const events = [];
  const seen = await engine.run(INFER, { models: { default: model }, onEvent: (e) => events.push(e) });
  assert.deepEqual(seen.usage, usage);
  assert.deepEqual(
    events.filter((e) => e.event.startsWith('model_') && !e.event.startsWith('model_turn')).map((e) => e.event),
    ['model_probe', 'model_usage'],
  );

  assert.deepEqual((await plain()).usage, usage);
  const traced = await engine.run(INFER, { models: { default: model }, tracer });
  assert.equal(traced.result, 'ok');
  const chats = exporter.getFinishedSpans().filter((s) => s.name === 'chat');
  assert.equal(chats.length, 1, 'the traced run has its chat span');
  assert.equal(chats[0].attributes['gen_ai.usage.input_tokens'], 3);

  const count = events.length;
  const recorded = await engine.run(INFER, { models: { default: model }, record: true });
  assert.deepEqual(recorded.usage, usage);
  assert.equal(events.length, count, "an earlier run's observer sees nothing of a later run");
  assert.equal(exporter.getFinishedSpans().filter((s) => s.name === 'chat').length, 1, "nor does an earlier run's tracer");
  const replayEvents = [];
  const replayed = await engine.run(INFER, { replay: recorded.journal, onEvent: (e) => replayEvents.push(e) });
  assert.deepEqual([replayed.result, replayed.usage], ['ok', usage], 'a replayed reply reports its recorded usage');
  assert.ok(replayEvents.some((e) => e.event === 'model_usage'));
  assert.deepEqual((await plain()).usage, usage);
});
