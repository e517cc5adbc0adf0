// OpenTelemetry tracing of runs (docs/providers.md, "Tracing"), checked through the real SDK: a
// BasicTracerProvider with an InMemorySpanExporter holds every span the run's tracer made, and the
// tests compare the tree they form (names, parents, attributes, statuses).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SpanStatusCode, SpanKind } from '@opentelemetry/api';
import { createEngine } from '../pkg/index.js';

const engine = await createEngine();

function sdkTracer() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { tracer: provider.getTracer('runvil-test'), spans: () => exporter.getFinishedSpans() };
}

const KEYS = [
  'gen_ai.operation.name',
  'gen_ai.agent.name',
  'gen_ai.request.model',
  'gen_ai.request.temperature',
  'gen_ai.response.model',
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.output_tokens',
  'gen_ai.response.finish_reasons',
  'gen_ai.tool.name',
  'gen_ai.tool.call.id',
  'runvil.role',
  'runvil.turn',
  'runvil.chain',
  'runvil.entry',
  'runvil.caller',
  'runvil.task.id',
  'runvil.section.outcome',
  'runvil.task.status',
  'error.type',
];

const ns = (t) => t[0] * 1e9 + t[1];

/**
 * The spans as a tree of `{ name, attributes (the KEYS), status, children }`; children in start
 * order (ties by name and task id), and exactly one root.
 */
function tree(spans) {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const children = new Map();
  const roots = [];
  for (const s of spans) {
    const parent = s.parentSpanContext?.spanId;
    if (parent && byId.has(parent)) (children.get(parent) ?? children.set(parent, []).get(parent)).push(s);
    else roots.push(s);
  }
  const order = (a, b) =>
    ns(a.startTime) - ns(b.startTime) ||
    String(a.attributes['runvil.task.id'] ?? '').localeCompare(String(b.attributes['runvil.task.id'] ?? ''));
  const node = (s) => {
    const attributes = Object.fromEntries(KEYS.filter((k) => k in s.attributes).map((k) => [k, s.attributes[k]]));
    const status = s.status.code === SpanStatusCode.ERROR ? { error: s.status.message } : 'ok';
    const kids = (children.get(s.spanContext().spanId) ?? []).sort(order).map(node);
    return kids.length ? { name: s.name, attributes, status, children: kids } : { name: s.name, attributes, status };
  };
  assert.equal(roots.length, 1, `one root span (got ${roots.map((s) => s.name).join(', ')})`);
  return node(roots[0]);
}

const TRIP = `---
name: trip
description: Plans a trip
runvil: 0
uses: [geo]
models:
  planner: { model: m-large, temperature: 0.2 }
---

# Trip planner

## Main

\`\`\`lua
tools.offer_local('grab', 'Grab a value', { value = 'string' }, function(args) return 'grabbed ' .. args.value end)
tools.offer('geo/lookup')
messages:user('plan')
local r = models.loop()
local h = call('## Budget')
local arms = tasks.fanout('### Leg', { 'a', 'b', 'c' })
return r .. '|' .. h .. '|' .. #arms
\`\`\`

### Leg

\`\`\`lua
return models.infer('leg ' .. item)
\`\`\`

## Budget

\`\`\`lua
return models.infer('budget')
\`\`\`
`;

const GEO = {
  name: 'geo',
  description: 'Places',
  tools: [
    {
      name: 'lookup',
      description: 'Look a city up',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      call: async ({ city }) => {
        throw new Error(`no such city: ${city}`);
      },
    },
  ],
};

/** The trip's model: a tool round then an answer in ## Main, one answer elsewhere. */
function tripModel() {
  return async (request) => {
    const model = 'm-large-2026-01';
    if (request.section === 'Main' && request.turn === 1) {
      return {
        content: '',
        tool_calls: [
          { id: 'c1', name: 'grab', arguments: { value: 'v' } },
          { id: 'c2', name: 'geo_lookup', arguments: { city: 'Atlantis' } },
        ],
        finish_reason: 'tool_calls',
        model,
        usage: { input_tokens: 12, output_tokens: 4 },
      };
    }
    const text = request.section === 'Main' ? 'planned' : `re: ${request.messages.at(-1).content}`;
    return { content: text, finish_reason: 'stop', model, usage: { input_tokens: 5, output_tokens: 2 } };
  };
}

const chat = (turn, entry, chain, finish, usage = [5, 2]) => ({
  name: 'chat m-large',
  attributes: {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'm-large',
    'gen_ai.request.temperature': 0.2,
    'gen_ai.response.model': 'm-large-2026-01',
    'gen_ai.usage.input_tokens': usage[0],
    'gen_ai.usage.output_tokens': usage[1],
    'gen_ai.response.finish_reasons': [finish],
    'runvil.role': 'planner',
    'runvil.turn': turn,
    'runvil.chain': chain,
    'runvil.entry': entry,
  },
  status: 'ok',
});

const leg = (k, entry) => ({
  name: 'task ### Leg',
  attributes: { 'runvil.entry': 1, 'runvil.task.id': `0.${k}`, 'runvil.task.status': 'done' },
  status: 'ok',
  children: [
    {
      name: 'section Leg',
      attributes: { 'runvil.chain': `0.${k}`, 'runvil.entry': entry, 'runvil.caller': 1, 'runvil.section.outcome': 'returned' },
      status: 'ok',
      children: [chat(1, entry, `0.${k}`, 'stop')],
    },
  ],
});

test('a run with a tool loop, a call, a fanout of 3 and a failing tool call: the exact span tree', async () => {
  const { tracer, spans } = sdkTracer();
  const outcome = await engine.run(TRIP, { seed: 3, tracer, packs: [GEO], models: { planner: tripModel() } });
  assert.equal(outcome.ok, true, JSON.stringify(outcome));
  assert.equal(outcome.result, 'planned|re: budget|3');
  const got = tree(spans());
  // The arms' entries are numbered as they start; which arm gets which id is the scheduler's.
  const armEntries = got.children[1].children.slice(5).map((t) => t.children[0].attributes['runvil.entry']);
  assert.deepEqual([...armEntries].sort(), [3, 4, 5]);
  assert.deepEqual(got, {
    name: 'invoke_agent Trip planner',
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'Trip planner' },
    status: 'ok',
    children: [
      {
        name: 'section Trip planner',
        attributes: { 'runvil.chain': '0', 'runvil.entry': 0, 'runvil.section.outcome': 'fell_through' },
        status: 'ok',
      },
      {
        name: 'section Main',
        attributes: { 'runvil.chain': '0', 'runvil.entry': 1, 'runvil.section.outcome': 'returned' },
        status: 'ok',
        children: [
          chat(1, 1, '0', 'tool_calls', [12, 4]),
          {
            name: 'execute_tool grab',
            attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'grab', 'gen_ai.tool.call.id': 'c1' },
            status: 'ok',
          },
          {
            name: 'execute_tool geo_lookup',
            attributes: {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': 'geo_lookup',
              'gen_ai.tool.call.id': 'c2',
              'error.type': 'tool_call_failed',
            },
            status: { error: 'no such city: Atlantis' },
          },
          chat(2, 1, '0', 'stop'),
          {
            name: 'section Budget',
            attributes: { 'runvil.chain': '0', 'runvil.entry': 2, 'runvil.caller': 1, 'runvil.section.outcome': 'returned' },
            status: 'ok',
            children: [chat(1, 2, '0', 'stop')],
          },
          leg(0, armEntries[0]),
          leg(1, armEntries[1]),
          leg(2, armEntries[2]),
        ],
      },
    ],
  });
  // Kinds as the conventions give them: chat is a client span, the rest internal.
  for (const s of spans()) assert.equal(s.kind, s.name.startsWith('chat') ? SpanKind.CLIENT : SpanKind.INTERNAL, s.name);
  // One trace; every span inside its parent's time.
  const all = spans();
  assert.equal(new Set(all.map((s) => s.spanContext().traceId)).size, 1);
  const byId = new Map(all.map((s) => [s.spanContext().spanId, s]));
  for (const s of all) {
    const parent = byId.get(s.parentSpanContext?.spanId);
    if (!parent) continue;
    assert.ok(ns(s.startTime) >= ns(parent.startTime) && ns(s.endTime) <= ns(parent.endTime), `${s.name} within ${parent.name}`);
  }
  // The run's span names the execution and seed.
  const root = all.find((s) => s.name.startsWith('invoke_agent'));
  assert.match(root.attributes['runvil.execution'], /^run-[0-9a-f]{12}$/);
  assert.equal(root.attributes['runvil.seed'], '3');
});

test('two fanout arms of one section are distinct sibling spans', async () => {
  const { tracer, spans } = sdkTracer();
  const src = '# F\n\n## Main\n\n```lua\nreturn #tasks.fanout("### W", { 1, 2 })\n```\n\n### W\n\n```lua\nreturn models.infer("x")\n```\n';
  const outcome = await engine.run(src, { tracer, models: { default: async () => ({ content: 'y', finish_reason: 'stop' }) } });
  assert.equal(outcome.result, '2');
  const arms = spans().filter((s) => s.name === 'section W');
  assert.equal(arms.length, 2);
  assert.notEqual(arms[0].spanContext().spanId, arms[1].spanContext().spanId);
  assert.deepEqual(arms.map((s) => s.attributes['runvil.chain']).sort(), ['0.0', '0.1']);
  const tasks = spans().filter((s) => s.name === 'task ### W');
  assert.deepEqual(arms.map((s) => s.parentSpanContext.spanId).sort(), tasks.map((s) => s.spanContext().spanId).sort());
  assert.equal(new Set(tasks.map((s) => s.parentSpanContext.spanId)).size, 1, 'the tasks are siblings');
  const main = spans().find((s) => s.name === 'section Main');
  assert.equal(tasks[0].parentSpanContext.spanId, main.spanContext().spanId);
  // Each arm's chat span is under its own arm.
  for (const arm of arms) {
    const chats = spans().filter((s) => s.name === 'chat' && s.parentSpanContext.spanId === arm.spanContext().spanId);
    assert.equal(chats.length, 1);
    assert.equal(chats[0].attributes['runvil.chain'], arm.attributes['runvil.chain']);
  }
});

test('a failed run marks the run span ERROR with the run error kind', async () => {
  const { tracer, spans } = sdkTracer();
  const outcome = await engine.run('# Boom\n\n## Main\n\n```lua\nerror("boom")\n```\n', { tracer });
  assert.equal(outcome.error.kind, 'Lua');
  const got = tree(spans());
  assert.deepEqual(got, {
    name: 'invoke_agent Boom',
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'Boom', 'error.type': 'Lua' },
    status: { error: '## Main:6: boom' },
    children: [
      {
        name: 'section Boom',
        attributes: { 'runvil.chain': '0', 'runvil.entry': 0, 'runvil.section.outcome': 'fell_through' },
        status: 'ok',
      },
      {
        name: 'section Main',
        attributes: {
          'runvil.chain': '0',
          'runvil.entry': 1,
          'runvil.section.outcome': 'failed',
          'error.type': 'section_failed',
        },
        status: { error: 'the section entry failed' },
      },
    ],
  });
});

test('a run refused before any section runs still has its run span, ERROR', async () => {
  const { tracer, spans } = sdkTracer();
  const outcome = await engine.run('---\nmodels:\n  writer: {}\n---\n# R\n\n## Main\n\n```lua\nreturn 1\n```\n', { tracer });
  assert.equal(outcome.error.kind, 'RequirementsUnmet');
  assert.deepEqual(
    spans().map((s) => [s.name, s.attributes['error.type'], s.status.code]),
    [['invoke_agent', 'RequirementsUnmet', SpanStatusCode.ERROR]],
  );
  const cancelled = sdkTracer();
  const controller = new AbortController();
  controller.abort();
  const o = await engine.run('# C\n\n## M\n\n```lua\nreturn 1\n```\n', { tracer: cancelled.tracer, signal: controller.signal });
  assert.equal(o.error.kind, 'Cancelled');
  assert.deepEqual(cancelled.spans().at(-1).attributes['error.type'], 'Cancelled');
});

test('contents are absent by default and present with traceContent', async () => {
  const CONTENT = ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result'];
  const plain = sdkTracer();
  await engine.run(TRIP, { seed: 3, tracer: plain.tracer, packs: [GEO], models: { planner: tripModel() } });
  for (const s of plain.spans()) {
    for (const key of CONTENT) assert.equal(key in s.attributes, false, `${s.name} has ${key}`);
  }
  const full = sdkTracer();
  const outcome = await engine.run(TRIP, {
    seed: 3,
    tracer: full.tracer,
    traceContent: true,
    packs: [GEO],
    models: { planner: tripModel() },
  });
  assert.equal(outcome.ok, true);
  const spans = full.spans();
  const first = spans.find((s) => s.name === 'chat m-large' && s.attributes['runvil.entry'] === 1 && s.attributes['runvil.turn'] === 1);
  assert.deepEqual(JSON.parse(first.attributes['gen_ai.input.messages']), [{ role: 'user', content: 'plan' }]);
  assert.deepEqual(JSON.parse(first.attributes['gen_ai.output.messages']), [
    {
      role: 'assistant',
      content: '',
      tool_calls: [
        { id: 'c1', name: 'grab', arguments: { value: 'v' } },
        { id: 'c2', name: 'geo_lookup', arguments: { city: 'Atlantis' } },
      ],
      finish_reason: 'tool_calls',
    },
  ]);
  const grab = spans.find((s) => s.name === 'execute_tool grab');
  assert.equal(grab.attributes['gen_ai.tool.call.arguments'], '{"value":"v"}');
  assert.equal(grab.attributes['gen_ai.tool.call.result'], 'grabbed v');
  const lookup = spans.find((s) => s.name === 'execute_tool geo_lookup');
  assert.equal(lookup.attributes['gen_ai.tool.call.arguments'], '{"city":"Atlantis"}');
  // The model reads a failure as the call's (untrusted, enveloped) result.
  assert.match(lookup.attributes['gen_ai.tool.call.result'], /no such city: Atlantis/);
  const root = spans.find((s) => s.name === 'invoke_agent Trip planner');
  assert.deepEqual(JSON.parse(root.attributes['gen_ai.output.messages']), [{ role: 'assistant', content: outcome.result }]);
});

test('a tool call from a script is an execute_tool span in its section', async () => {
  const { tracer, spans } = sdkTracer();
  const src = "---\nname: s\ndescription: s\nruntime: 0\nuses: [geo]\n---\n# S\n\n## Main\n\n```lua\nlocal ok, e = pcall(tools.call, 'geo/lookup', { city = 'Oz' })\nreturn tostring(ok)\n```\n";
  const outcome = await engine.run(src.replace('runtime', 'runvil'), { tracer, packs: [GEO] });
  assert.equal(outcome.result, 'false', JSON.stringify(outcome));
  const call = spans().find((s) => s.name.startsWith('execute_tool'));
  const main = spans().find((s) => s.name === 'section Main');
  // The name as the engine reports the call (its wire name), with the tool's id beside it.
  assert.equal(call.name, 'execute_tool geo_lookup');
  assert.equal(call.attributes['runvil.tool.id'], 'geo/lookup');
  assert.equal(call.parentSpanContext.spanId, main.spanContext().spanId);
  assert.equal(call.attributes['runvil.tool.caller'], 'script');
  assert.equal(call.status.code, SpanStatusCode.ERROR);
});

test('a tracer that throws, or whose spans throw, never changes the outcome', async () => {
  const models = () => ({ planner: tripModel() });
  const events = (list) => (e) => list.push(e.type);
  const plainEvents = [];
  const plain = await engine.run(TRIP, { seed: 5, packs: [GEO], models: models(), onEvent: events(plainEvents) });
  const throwing = () => {
    throw new Error('tracer broke');
  };
  const span = new Proxy({}, { get: () => throwing });
  const tracers = [
    { startSpan: throwing },
    { startSpan: () => span },
    { startSpan: () => Promise.reject(new Error('a promise, not a span')) },
    { startSpan: () => null },
    new Proxy({ startSpan() {} }, { get: (t, key) => (key === 'startSpan' ? () => { throw new Error('x'); } : undefined) }),
  ];
  for (const tracer of tracers) {
    const seen = [];
    const outcome = await engine.run(TRIP, { seed: 5, tracer, traceContent: true, packs: [GEO], models: models(), onEvent: events(seen) });
    assert.deepEqual(outcome, plain);
    // The arms interleave as their models answer: the same events, not always in one order.
    assert.deepEqual(seen.sort(), [...plainEvents].sort());
  }
  // A failing run too.
  const failed = await engine.run('# F\n\n## M\n\n```lua\nerror("x")\n```\n', { tracer: tracers[1] });
  assert.equal(failed.error.message, '## M:6: x');
});

test('every event has a time: ms since the epoch, in order', async () => {
  const events = [];
  const before = Date.now();
  await engine.run(TRIP, { seed: 1, packs: [GEO], models: { planner: tripModel() }, onEvent: (e) => events.push(e) });
  const after = Date.now();
  assert.ok(events.length > 20);
  let last = 0;
  for (const e of events) {
    assert.equal(typeof e.time, 'number', e.type);
    assert.ok(e.time >= before - 1 && e.time <= after + 1, `${e.type} at ${e.time}`);
    assert.ok(e.time >= last, `${e.type} in order`);
    last = e.time;
  }
  // Sub-millisecond where the host has performance.now() (Node does).
  assert.ok(events.some((e) => !Number.isInteger(e.time)));
});

test('model requests carry their chain and entry', async () => {
  const seen = [];
  const model = async (r) => {
    seen.push([r.section, r.chain, r.entry]);
    return { content: 'ok', finish_reason: 'stop' };
  };
  await engine.run('# T\n\n## Main\n\n```lua\nmessages:user("x")\nmodels.loop()\nreturn #tasks.fanout("### W", { 1 })\n```\n\n### W\n\n```lua\nreturn models.infer("y")\n```\n', {
    models: { default: model },
  });
  assert.deepEqual(seen, [['Main', '0', 1], ['W', '0.0', 2]]);
});

test('a tracer or traceContent of the wrong kind is a TypeError', async () => {
  await assert.rejects(engine.run('# T\n', { tracer: {} }), {
    name: 'TypeError',
    message: 'engine.run: tracer must be an OpenTelemetry Tracer, an object with startSpan(name, options, context) (got an object)',
  });
  await assert.rejects(engine.run('# T\n', { tracer: () => {} }), { name: 'TypeError', message: /^engine\.run: tracer must be/ });
  await assert.rejects(engine.run('# T\n', { tracer: sdkTracer().tracer, traceContent: 'yes' }), {
    name: 'TypeError',
    message: "engine.run: traceContent must be a boolean (got a string)",
  });
});

test('child spans are parented through the context argument alone', async () => {
  // A duck-typed recording tracer: what any Tracer gets from the run.
  const calls = [];
  const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');
  let n = 0;
  const tracer = {
    startSpan(name, options, context) {
      const span = { id: ++n, name, setAttribute() {}, setStatus() {}, recordException() {}, end() {} };
      calls.push({ name, parent: context?.getValue(SPAN_KEY)?.id, arity: arguments.length, start: options.startTime });
      return span;
    },
  };
  await engine.run('# T\n\n## Main\n\n```lua\nreturn call("## N")\n```\n\n## N\n\n```lua\nreturn "n"\n```\n', { tracer });
  assert.deepEqual(calls.map(({ name, parent, arity }) => [name, parent, arity]), [
    // The run's span takes the host's active context: no context argument.
    ['invoke_agent T', undefined, 2],
    ['section T', 1, 3],
    ['section Main', 1, 3],
    ['section N', 3, 3],
  ]);
  for (const c of calls) assert.equal(typeof c.start, 'number');
});

test('a model call that throws is an ERROR chat span with the exception; the run span says Model', async () => {
  const { tracer, spans } = sdkTracer();
  const model = async () => {
    throw new Error('provider down');
  };
  const outcome = await engine.run('# M\n\n## Main\n\n```lua\nreturn models.infer("x")\n```\n', { tracer, models: { default: model } });
  assert.equal(outcome.error.kind, 'Model');
  const chatSpan = spans().find((s) => s.name === 'chat');
  assert.equal(chatSpan.status.code, SpanStatusCode.ERROR);
  assert.equal(chatSpan.status.message, 'provider down');
  assert.equal(chatSpan.attributes['error.type'], 'model_error');
  assert.deepEqual(chatSpan.events.map((e) => [e.name, e.attributes['exception.message']]), [['exception', 'provider down']]);
  const root = spans().find((s) => s.name === 'invoke_agent M');
  assert.equal(root.attributes['error.type'], 'Model');
});

test("a run started inside a host span nests under it (the host's active context)", async () => {
  const { AsyncLocalStorage } = await import('node:async_hooks');
  const { context, trace, ROOT_CONTEXT } = await import('@opentelemetry/api');
  // What @opentelemetry/context-async-hooks registers (NodeTracerProvider.register() does it).
  const storage = new AsyncLocalStorage();
  const manager = {
    active: () => storage.getStore() ?? ROOT_CONTEXT,
    with: (ctx, fn, thisArg, ...args) => storage.run(ctx, () => fn.apply(thisArg, args)),
    bind: (ctx, target) => target,
    enable: () => manager,
    disable: () => manager,
  };
  assert.equal(context.setGlobalContextManager(manager), true);
  try {
    const { tracer, spans } = sdkTracer();
    const request = tracer.startSpan('GET /plan');
    const outcome = await context.with(trace.setSpan(context.active(), request), () =>
      engine.run('# Nested\n\n## Main\n\n```lua\nreturn "n"\n```\n', { tracer }),
    );
    request.end();
    assert.equal(outcome.result, 'n');
    const root = spans().find((s) => s.name === 'invoke_agent Nested');
    assert.equal(root.parentSpanContext?.spanId, request.spanContext().spanId);
    assert.equal(root.spanContext().traceId, request.spanContext().traceId);
    const main = spans().find((s) => s.name === 'section Main');
    assert.equal(main.parentSpanContext.spanId, root.spanContext().spanId);
  } finally {
    context.disable();
  }
});

test('tool call spans start when each call started: Pack calls of a batch together, a local call after them', async () => {
  const { tracer, spans } = sdkTracer();
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const slow = {
    name: 'slow',
    description: 'Slow tools',
    tools: ['a', 'b'].map((name) => ({
      name,
      description: `slow ${name}`,
      parameters: { type: 'object', properties: {} },
      call: async () => {
        await sleep(40);
        return name;
      },
    })),
  };
  const src = "---\nname: s\ndescription: s\nruntime: 0\nuses: [slow]\n---\n# S\n\n## Main\n\n```lua\ntools.offer_local('grab', 'Grab', {}, function() return 'g' end)\ntools.offer('slow/a')\ntools.offer('slow/b')\nmessages:user('go')\nreturn models.loop()\n```\n".replace('runtime', 'runvil');
  let round = 0;
  const model = async () =>
    round++ === 0
      ? {
          content: '',
          finish_reason: 'tool_calls',
          tool_calls: [
            { id: 'a1', name: 'slow_a', arguments: {} },
            { id: 'b1', name: 'slow_b', arguments: {} },
            { id: 'g1', name: 'grab', arguments: {} },
            { id: 'a2', name: 'slow_a', arguments: {} },
          ],
        }
      : { content: 'ok', finish_reason: 'stop' };
  const outcome = await engine.run(src, { tracer, packs: [slow], models: { default: model } });
  assert.equal(outcome.result, 'ok', JSON.stringify(outcome));
  const by = Object.fromEntries(spans().filter((s) => s.name.startsWith('execute_tool')).map((s) => [s.attributes['gen_ai.tool.call.id'], s]));
  assert.deepEqual(Object.keys(by).sort(), ['a1', 'a2', 'b1', 'g1']);
  const ms = (t) => ns(t) / 1e6;
  // a1 and b1 ran at once, from the batch's arrival.
  assert.equal(ns(by.a1.startTime), ns(by.b1.startTime));
  for (const id of ['a1', 'b1', 'a2']) assert.ok(ms(by[id].endTime) - ms(by[id].startTime) >= 35, `${id} lasted the tool's 40 ms`);
  // The local call waited for both; the last Pack call for the local one.
  assert.ok(ns(by.g1.startTime) >= Math.max(ns(by.a1.endTime), ns(by.b1.endTime)));
  assert.ok(ns(by.a2.startTime) >= ns(by.g1.endTime));
  assert.ok(ms(by.g1.endTime) - ms(by.g1.startTime) < 35, 'the local call is quick');
});
