// aiSdkModel across the AI SDK majors: the language model specification v2 (AI SDK 5), v3 (AI SDK 6)
// and v4 (AI SDK 7), each driven with that major's own mock model (`ai/test`) and with that major's
// `@ai-sdk/openai-compatible` against the local chat-completions server. The majors are installed
// side by side (package.json: `ai` and `@ai-sdk/openai-compatible` are AI SDK 5, `ai6` /
// `openai-compatible6` AI SDK 6, `ai7` / `openai-compatible7` AI SDK 7). AI SDK 7 needs Node >= 22:
// under Node 20 its tests are skipped with a message, under Node 22 and later they run and a missing
// AI SDK 7 fails them. `npm ci --prefix tools/node24` installs Node 24 (README.md, docs/providers.md).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createEngine, aiSdkModel } from '../pkg/index.js';
import { ROOT, localProvider } from './helpers.mjs';

const NODE = Number(process.versions.node.split('.')[0]);
const MAJORS = [
  { sdk: 5, spec: 'v2', ai: 'ai', compat: '@ai-sdk/openai-compatible', mock: 'MockLanguageModelV2' },
  { sdk: 6, spec: 'v3', ai: 'ai6', compat: 'openai-compatible6', mock: 'MockLanguageModelV3' },
  { sdk: 7, spec: 'v4', ai: 'ai7', compat: 'openai-compatible7', mock: 'MockLanguageModelV4', node: 22 },
];
const NODE24 = 'tools/node24/node_modules/node24/bin/node --test pkg-tests/*.test.mjs';
for (const m of MAJORS) {
  m.skip = m.node && NODE < m.node ? `AI SDK ${m.sdk} needs Node >= ${m.node}; this is Node ${process.versions.node}: run ${NODE24} (npm ci --prefix tools/node24 installs it)` : false;
  if (m.skip) continue;
  const [ai, aiTest, compat] = await Promise.all([import(m.ai), import(`${m.ai}/test`), import(m.compat)]);
  Object.assign(m, { APICallError: ai.APICallError, simulateReadableStream: ai.simulateReadableStream, Mock: aiTest[m.mock], createOpenAICompatible: compat.createOpenAICompatible });
}

const engine = await createEngine();
const INFER = '# T\n\n## Main\n\n```lua\nreturn models.infer("hello")\n```\n';
/** Main offers the local tool `grab` and runs the loop. */
const GRAB = '# T\n\n## Main\n\n```lua\ntools.offer_local("grab", "Grab a value", { value = "string" }, function(args) return "grabbed " .. tostring(args.value) end)\nmessages:user("please grab x")\nreturn models.loop()\n```\n';
/** The loop's reply and finish reason, or its error as `kind|message`. */
const LOOP = '# T\n\n## Main\n\n```lua\nmessages:user("x")\nlocal ok, r = pcall(models.loop)\nif not ok then return r.kind .. "|" .. r.message end\nreturn r .. "|" .. sys.reply_finish_reason\n```\n';
const run = (src, model, extra = {}) => engine.run(src, { models: { default: model }, ...extra });
const warnings = (events) => events.filter((e) => e.event === 'model_warning').map((e) => e.message);
/** A run's error as kind and message (where it happened is the engine's, tested elsewhere). */
const failed = (outcome) => outcome.error && { kind: outcome.error.kind, message: outcome.error.message };

// ---- each version's shapes, for the mock results -----------------------------------------------

/** Usage in the version's shape: flat in v2, nested from v3 on. */
function usage(m, { input, output, cached, reasoning, cacheWrite, text }) {
  if (m.spec === 'v2') return { inputTokens: input, outputTokens: output, totalTokens: (input ?? 0) + (output ?? 0), ...(cached !== undefined && { cachedInputTokens: cached }), ...(reasoning !== undefined && { reasoningTokens: reasoning }) };
  return {
    inputTokens: { total: input, noCache: input === undefined || cached === undefined ? undefined : input - cached, cacheRead: cached, cacheWrite },
    outputTokens: { total: output, text, reasoning },
  };
}
/** A finish reason in the version's shape: a string in v2, `{ unified, raw }` from v3 on. */
const finish = (m, unified, raw = unified) => (m.spec === 'v2' ? unified : { unified, raw });
const U = { input: 1, output: 1 };
const result = (m, content, reason = 'stop', extra = {}) => ({ content, finishReason: finish(m, reason), usage: usage(m, U), warnings: [], ...extra });
const textResult = (m, t, reason = 'stop', extra = {}) => result(m, [{ type: 'text', text: t }], reason, extra);
const streamOf = (m, chunks) => ({ stream: m.simulateReadableStream({ chunks, chunkDelayInMs: 1 }) });
const finishPart = (m, reason, u = usage(m, U)) => ({ type: 'finish', finishReason: finish(m, reason), usage: u });

for (const m of MAJORS) {
  const name = (what) => `AI SDK ${m.sdk} (${m.spec}): ${what}`;
  const opts = { skip: m.skip };

  test(name("its mock model is accepted for its specification version; other versions are refused"), opts, () => {
    const mock = new m.Mock({ modelId: 'mock' });
    assert.equal(mock.specificationVersion, m.spec);
    assert.equal(typeof aiSdkModel(mock), 'function');
    for (const version of ['v1', 'v5', undefined]) {
      const other = { specificationVersion: version, provider: 'p', modelId: 'm', doGenerate: async () => ({}), doStream: async () => ({}) };
      assert.throws(() => aiSdkModel(other), {
        name: 'TypeError',
        message: `aiSdkModel: the model implements the AI SDK language model specification ${version ?? '(none given)'}; aiSdkModel speaks v2, v3 and v4 (the providers of AI SDK 5, 6 and 7)`,
      });
    }
  });

  test(name('a tool loop through doGenerate: the prompt and tools in the specification\'s shapes, calls, text, reasoning, usage and model back'), opts, async () => {
    const mock = new m.Mock({
      modelId: 'mock-1',
      doGenerate: [
        result(m, [{ type: 'reasoning', text: 'I should grab.' }, { type: 'text', text: 'Grabbing.' }, { type: 'tool-call', toolCallId: 'call_g', toolName: 'grab', input: '{"value":"x"}' }], 'tool-calls', {
          usage: usage(m, { input: 100, output: 10, cached: 40, reasoning: 5, cacheWrite: 7, text: 5 }),
          response: { modelId: 'mock-1-2026' },
        }),
        result(m, [{ type: 'text', text: 'Done: ' }, { type: 'text', text: 'x' }], 'stop', { usage: usage(m, { input: 120, output: 20 }) }),
      ],
    });
    const src = '---\nmodels:\n  default: { temperature: 0.2, max_tokens: 300, tool_choice: grab }\n---\n' + GRAB.replace('return models.loop()', 'return models.loop() .. "|" .. sys.model .. "|" .. messages[2].content');
    const events = [];
    const outcome = await run(src, aiSdkModel(mock), { onEvent: (e) => events.push(e) });
    assert.equal(outcome.result, 'Done: x|mock-1|Grabbing.', JSON.stringify(outcome.error));
    const [first, second] = mock.doGenerateCalls;
    assert.equal(first.temperature, 0.2);
    assert.equal(first.maxOutputTokens, 300);
    assert.deepEqual(first.toolChoice, { type: 'tool', toolName: 'grab' });
    assert.deepEqual(first.tools, [{ type: 'function', name: 'grab', description: 'Grab a value', inputSchema: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] } }]);
    assert.deepEqual(first.prompt, [{ role: 'user', content: [{ type: 'text', text: 'please grab x' }] }]);
    assert.deepEqual(second.prompt.slice(1), [
      { role: 'assistant', content: [{ type: 'reasoning', text: 'I should grab.' }, { type: 'text', text: 'Grabbing.' }, { type: 'tool-call', toolCallId: 'call_g', toolName: 'grab', input: { value: 'x' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_g', toolName: 'grab', output: { type: 'text', value: 'grabbed x' } }] },
    ]);
    assert.deepEqual(events.filter((e) => e.event === 'model_usage').map((e) => e.usage), [
      { input_tokens: 100, output_tokens: 10, cached_tokens: 40, reasoning_tokens: 5 }, { input_tokens: 120, output_tokens: 20 },
    ]);
    assert.deepEqual(outcome.usage, { default: { calls: 2, input_tokens: 220, output_tokens: 30, cached_tokens: 40, reasoning_tokens: 5 } });
    assert.deepEqual(warnings(events), []);
  });

  test(name('usage: every count the version reports, and none when it reports none'), opts, async () => {
    const cases = [
      [{ input: 10, output: 3 }, { input_tokens: 10, output_tokens: 3 }],
      [{ input: 10, output: 3, cached: 0, reasoning: 0 }, { input_tokens: 10, output_tokens: 3, cached_tokens: 0, reasoning_tokens: 0 }],
      [{ input: undefined, output: 4 }, { input_tokens: 0, output_tokens: 4 }],
      [{ input: undefined, output: undefined }, undefined],
    ];
    if (m.spec !== 'v2') {
      // No totals: the parts add up to them (cached reads and writes are input tokens too).
      cases.push([{ input: undefined, output: undefined, cached: 6, cacheWrite: 2, text: 3, reasoning: 2 }, { input_tokens: 8, output_tokens: 5, cached_tokens: 6, reasoning_tokens: 2 }]);
    }
    for (const [counts, expected] of cases) {
      const events = [];
      const mock = new m.Mock({ doGenerate: async () => textResult(m, 'ok', 'stop', { usage: usage(m, counts) }) });
      assert.equal((await run(INFER, aiSdkModel(mock), { onEvent: (e) => events.push(e) })).result, 'ok');
      assert.deepEqual(events.find((e) => e.event === 'model_usage')?.usage, expected, JSON.stringify(counts));
    }
  });

  test(name('finish reasons: stop, length, content-filter, error, tool-calls, other' + (m.spec === 'v2' ? ', unknown' : '') + (m.spec === 'v4' ? ', interrupted' : '')), opts, async () => {
    const model = (reply) => aiSdkModel(new m.Mock({ doGenerate: async () => reply }), { retryDelayMs: 1, maxRetries: 0 });
    const expect = [
      [textResult(m, 'fine', 'stop'), 'fine|stop'],
      [textResult(m, 'cut sho', 'length'), 'cut sho|length'],
      [textResult(m, '', 'content-filter'), "model|the provider's content filter withheld the reply (finish reason content-filter)"],
      [textResult(m, 'partial an', 'content-filter'), 'partial an|content_filter'],
      [textResult(m, 'half', 'error'), 'model|the model provider ended the reply with an error (finish reason error)'],
      [textResult(m, 'odd', 'other'), 'odd|stop'],
      // Tool calls make the reply's reason, whatever the provider said.
      [result(m, [{ type: 'tool-call', toolCallId: 'c', toolName: 'nope', input: '{}' }], 'stop'), 'out_of_scope_tool|tool "nope" is not in this section\'s scope'],
    ];
    if (m.spec === 'v2') expect.push([textResult(m, 'unsure', 'unknown'), 'unsure|stop']);
    if (m.spec === 'v4') expect.push([textResult(m, 'cut', 'interrupted'), "model|the model provider's answer ended before it was complete (finish reason interrupted)"]);
    for (const [reply, expected] of expect) {
      const got = (await run(LOOP, model(reply))).result;
      assert.ok(got.startsWith(expected), `${JSON.stringify(reply.finishReason)}: ${got}`);
    }
  });

  test(name('provider call warnings of the version\'s kinds are model_warning events'), opts, async () => {
    const kinds = m.spec === 'v2'
      ? [[{ type: 'unsupported-setting', setting: 'seed', details: 'no seeds here' }, 'the provider does not support the setting seed: no seeds here'], [{ type: 'unsupported-tool', tool: { type: 'function', name: 'grab' } }, 'the provider does not support the tool grab']]
      : [[{ type: 'unsupported', feature: 'topK', details: 'not here' }, 'the provider does not support topK: not here'], [{ type: 'compatibility', feature: 'tool streaming' }, 'the provider serves tool streaming in a compatibility mode']];
    if (m.spec === 'v4') kinds.push([{ type: 'deprecated', setting: 'maxTokens', message: 'use maxOutputTokens' }, 'the provider deprecates maxTokens: use maxOutputTokens']);
    kinds.push([{ type: 'other', message: 'beware' }, 'beware']);
    for (const stream of [false, true]) {
      const mock = new m.Mock({
        doGenerate: async () => textResult(m, 'ok', 'stop', { warnings: kinds.map(([w]) => w) }),
        doStream: async () => streamOf(m, [{ type: 'stream-start', warnings: kinds.map(([w]) => w) }, { type: 'text-delta', id: 't', delta: 'ok' }, finishPart(m, 'stop')]),
      });
      const events = [];
      assert.equal((await run(INFER, aiSdkModel(mock, { stream }), { onEvent: (e) => events.push(e) })).result, 'ok');
      assert.deepEqual(warnings(events), kinds.map(([, said]) => said), `stream: ${stream}`);
    }
  });

  test(name('the role spec\'s reasoning effort is the call option reasoning from v4 on, and said unsent before'), opts, async () => {
    const mock = new m.Mock({ doGenerate: async () => textResult(m, 'ok') });
    const events = [];
    await run('---\nmodels:\n  default: { reasoning_effort: low }\n---\n' + INFER, aiSdkModel(mock), { onEvent: (e) => events.push(e) });
    if (m.spec === 'v4') {
      assert.equal(mock.doGenerateCalls[0].reasoning, 'low');
      assert.deepEqual(warnings(events), []);
    } else {
      assert.equal('reasoning' in mock.doGenerateCalls[0], false);
      assert.deepEqual(warnings(events), [`role spec options not sent (not AI SDK ${m.spec} call options, or values they cannot take; provider-specific ones go in providerOptions): reasoning_effort`]);
    }
    if (m.spec === 'v4') {
      const bad = [];
      await run('---\nmodels:\n  default: { reasoning: very }\n---\n' + INFER, aiSdkModel(mock), { onEvent: (e) => bad.push(e) });
      assert.equal(mock.doGenerateCalls[1].reasoning, undefined);
      assert.match(warnings(bad)[0], /role spec options not sent .*: reasoning$/);
    }
  });

  test(name('streaming through doStream: text and reasoning deltas as events, the tool call whole, the same reply'), opts, async () => {
    const mock = new m.Mock({
      doStream: [
        streamOf(m, [
          { type: 'stream-start', warnings: [] },
          { type: 'reasoning-start', id: 'r' }, { type: 'reasoning-delta', id: 'r', delta: 'I will ' }, { type: 'reasoning-delta', id: 'r', delta: 'grab.' }, { type: 'reasoning-end', id: 'r' },
          { type: 'tool-input-start', id: 'call_s', toolName: 'grab' }, { type: 'tool-input-delta', id: 'call_s', delta: '{"value":"x"}' }, { type: 'tool-input-end', id: 'call_s' },
          { type: 'tool-call', toolCallId: 'call_s', toolName: 'grab', input: '{"value":"x"}' },
          ...(m.spec === 'v4' ? [{ type: 'ping' }] : []),
          finishPart(m, 'tool-calls', usage(m, { input: 12, output: 5, cached: 2, reasoning: 2 })),
        ]),
        streamOf(m, [
          { type: 'response-metadata', modelId: 'm-stream' }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Hel' }, { type: 'text-delta', id: 't', delta: 'lo' }, { type: 'text-end', id: 't' },
          { type: 'raw', rawValue: { any: 'thing' } },
          finishPart(m, 'stop', usage(m, { input: 20, output: 2 })),
        ]),
      ],
    });
    const events = [];
    const src = GRAB.replace('return models.loop()', 'return models.loop() .. "|" .. sys.model .. "|" .. messages[3].content');
    const outcome = await run(src, aiSdkModel(mock, { stream: true }), { onEvent: (e) => events.push(e) });
    assert.equal(outcome.result, 'Hello|m-stream|grabbed x', JSON.stringify(outcome.error));
    assert.deepEqual(mock.doStreamCalls[1].prompt[1].content[0], { type: 'reasoning', text: 'I will grab.' });
    assert.deepEqual(events.filter((e) => e.event === 'model_delta').map((e) => [e.turn, e.text ?? null, e.reasoning ?? null]), [
      [1, null, 'I will '], [1, null, 'grab.'], [2, 'Hel', null], [2, 'lo', null],
    ]);
    assert.deepEqual(outcome.usage, { default: { calls: 2, input_tokens: 32, output_tokens: 7, cached_tokens: 2, reasoning_tokens: 2 } });
    assert.deepEqual(warnings(events), [], 'framing, raw and ping parts are not news');
  });

  test(name('what a Runvil reply has no place for is said: the provider\'s own tools, files, sources, parts the adapter does not know'), opts, async () => {
    const providerCall = { type: 'tool-call', toolCallId: 'ws_1', toolName: 'web_search', input: '{"query":"rivers"}', providerExecuted: true };
    const providerResult = { type: 'tool-result', toolCallId: 'ws_1', toolName: 'web_search', result: { hits: 2 }, ...(m.spec === 'v2' && { providerExecuted: true }) };
    const file = { type: 'file', mediaType: 'image/png', data: m.spec === 'v4' ? { type: 'data', data: 'iVBORw0K' } : 'iVBORw0K' };
    const sources = [{ type: 'source', sourceType: 'url', id: 's1', url: 'https://rivers.example/nile' }, { type: 'source', sourceType: 'document', id: 's2', mediaType: 'application/pdf', title: 'Rivers of Africa' }];
    const v4 = m.spec === 'v4'
      ? [{ type: 'custom', kind: 'anthropic.compaction' }, { type: 'reasoning-file', mediaType: 'image/png', data: { type: 'url', url: new URL('https://files.example/r.png') } }]
      : [];
    const text = { type: 'text', text: 'The Nile.', ...(m.spec === 'v4' && { citations: [{ source: { type: 'source', sourceType: 'url', id: 'c1', url: 'https://rivers.example/cited' }, citedText: 'Nile' }] }) };
    const said = [
      'the provider ran its own tools (provider-executed, not the run\'s): web_search; their calls and results are not part of the reply, nor of the conversation sent back',
      `the reply's files are not kept (a Runvil reply is text): image/png${m.spec === 'v4' ? ', image/png (reasoning)' : ''}`,
      `the reply's sources are not kept (a Runvil reply is text): ${m.spec === 'v4' ? 'https://rivers.example/cited, ' : ''}https://rivers.example/nile, "Rivers of Africa"`,
      ...(m.spec === 'v4' ? ["the reply's provider-specific content is not kept: anthropic.compaction"] : []),
      'the reply had parts aiSdkModel does not know, not kept: hologram',
    ];
    const content = [providerCall, providerResult, text, file, ...sources, ...v4, { type: 'hologram' }];
    const events = [];
    const mock = new m.Mock({ doGenerate: async () => result(m, content, 'stop') });
    assert.equal((await run(INFER, aiSdkModel(mock), { onEvent: (e) => events.push(e) })).result, 'The Nile.');
    assert.deepEqual(warnings(events), said);

    // The same parts in a stream (V4's citations come on the text's end).
    const { citations, ...plain } = text;
    const parts = [
      { type: 'tool-input-start', id: 'ws_1', toolName: 'web_search', providerExecuted: true }, { type: 'tool-input-end', id: 'ws_1' }, providerCall, providerResult,
      { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: plain.text }, { type: 'text-end', id: 't', ...(citations && { citations }) },
      file, ...sources, ...v4, { type: 'hologram' }, finishPart(m, 'stop'),
    ];
    const streamed = [];
    const stream = new m.Mock({ doStream: async () => streamOf(m, parts) });
    assert.equal((await run(INFER, aiSdkModel(stream, { stream: true }), { onEvent: (e) => streamed.push(e) })).result, 'The Nile.');
    assert.deepEqual(warnings(streamed), said);
  });

  if (m.spec !== 'v2') {
    test(name('a tool-approval request is a Model error: the provider waits for an answer a Runvil conversation cannot give'), opts, async () => {
      const call = { type: 'tool-call', toolCallId: 'mcp_1', toolName: 'delete_repo', input: '{}', providerExecuted: true, dynamic: true };
      const approval = { type: 'tool-approval-request', approvalId: 'ap_1', toolCallId: 'mcp_1' };
      const message = "the provider asks for approval to run its own tool delete_repo (tool-approval-request); aiSdkModel cannot answer one: configure the provider's tool to run without approval";
      let mock = new m.Mock({ doGenerate: async () => result(m, [call, approval], 'tool-calls') });
      assert.deepEqual(failed(await run(INFER, aiSdkModel(mock))), { kind: 'Model', message });
      mock = new m.Mock({ doStream: async () => streamOf(m, [call, approval, finishPart(m, 'tool-calls')]) });
      assert.equal((await run(INFER, aiSdkModel(mock, { stream: true }))).error.message, message);
      mock = new m.Mock({ doGenerate: async () => result(m, [approval], 'tool-calls') });
      assert.match((await run(INFER, aiSdkModel(mock))).error.message, /its own tool call mcp_1 \(tool-approval-request\)/);
      assert.equal(mock.doGenerateCalls.length, 1, 'not retried');
    });
  }

  test(name("retries: the major's APICallError when isRetryable, honouring retry-after-ms; a stream's error before any text is retried, after text final"), opts, async () => {
    const apiError = (statusCode, message, responseHeaders) => new m.APICallError({ message, url: 'http://provider.test/v1/x', requestBodyValues: {}, statusCode, responseHeaders });
    const steps = [apiError(429, 'slow down', { 'retry-after-ms': '60' }), apiError(503, 'unavailable', { 'Retry-After': '0' }), textResult(m, 'finally')];
    const mock = new m.Mock({ doGenerate: async () => { const s = steps.shift(); if (s instanceof Error) throw s; return s; } });
    const seen = [];
    const t0 = Date.now();
    assert.equal((await run(INFER, aiSdkModel(mock, { retryDelayMs: 1, onRetry: (i) => seen.push(i) }))).result, 'finally');
    assert.ok(Date.now() - t0 >= 55, 'retry-after-ms is honoured');
    assert.deepEqual(seen.map((i) => [i.attempt, i.delay_ms, i.reason]), [[2, 60, 'the model provider answered 429: slow down'], [3, 0, 'the model provider answered 503: unavailable']]);

    const refused = new m.Mock({ doGenerate: async () => { throw apiError(400, 'bad request'); } });
    assert.equal((await run(INFER, aiSdkModel(refused, { retryDelayMs: 1 }))).error.message, 'the model provider answered 400: bad request');
    assert.equal(refused.doGenerateCalls.length, 1);

    const broken = [streamOf(m, [{ type: 'error', error: { message: 'busy', code: 503 } }]), streamOf(m, [{ type: 'text-delta', id: 't', delta: 'par' }, { type: 'error', error: { message: 'died' } }])];
    const flaky = new m.Mock({ doStream: async () => broken.shift() });
    const outcome = await run(INFER, aiSdkModel(flaky, { stream: true, retryDelayMs: 1 }));
    assert.equal(outcome.error.message, "the model provider's stream broke off (the model provider answered with an error: died)");
    assert.equal(flaky.doStreamCalls.length, 2);

    if (m.spec === 'v4') {
      // An interrupted answer is retried like a broken stream, unless its text was already shown.
      const answers = [textResult(m, 'cut', 'interrupted'), textResult(m, 'whole')];
      const interrupted = new m.Mock({ doGenerate: async () => answers.shift() });
      assert.equal((await run(INFER, aiSdkModel(interrupted, { retryDelayMs: 1 }))).result, 'whole');
      const shown = new m.Mock({ doStream: async () => streamOf(m, [{ type: 'text-delta', id: 't', delta: 'cu' }, finishPart(m, 'interrupted', usage(m, U))]) });
      assert.equal((await run(INFER, aiSdkModel(shown, { stream: true, retryDelayMs: 1 }))).error.message, "the model provider's stream broke off (the model provider's answer ended before it was complete (finish reason interrupted))");
      assert.equal(shown.doStreamCalls.length, 1);
    }
  });
}

// ---- each major's @ai-sdk/openai-compatible against the local server ---------------------------

const requests = [];
/** Scripted answers, first first: (body, res) => void. */
const script = [];
let provider;
before(async () => {
  provider = await localProvider((body, req, res) => {
    requests.push({ url: req.url, body });
    const answer = script.shift();
    if (answer) return answer(body, res);
    res.writeHead(599, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'the test has no answer left' } }));
  });
});
after(() => provider.close());

const json = (status, payload, headers = {}) => (_body, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(payload));
};
const completion = (message, finish_reason, extra = {}) => json(200, { id: 'c', object: 'chat.completion', created: 1, model: 'small-2026', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason }], ...extra });
const sse = (events) => (_body, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) res.write(`data: ${JSON.stringify(e)}\n\n`);
  res.end('data: [DONE]\n\n');
};
const chunk = (delta, finish_reason = null, extra = {}) => ({ id: 's', object: 'chat.completion.chunk', created: 1, model: 'small-s', choices: [{ index: 0, delta, finish_reason }], ...extra });
const USAGE_1 = { prompt_tokens: 30, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 10 }, completion_tokens_details: { reasoning_tokens: 3 } };

for (const m of MAJORS) {
  const name = (what) => `AI SDK ${m.sdk} (${m.spec}) openai-compatible over HTTP: ${what}`;
  const opts = { skip: m.skip };
  const local = () => m.createOpenAICompatible({ name: 'local', baseURL: provider.baseURL, apiKey: 'sk-local', includeUsage: true }).chatModel('small');

  test(name('a tool loop with doGenerate: options by name, reasoning sent back, usage with cached and reasoning tokens'), opts, async () => {
    requests.length = 0;
    script.push(
      completion({ content: null, reasoning_content: 'grab it', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'grab', arguments: '{"value":"x"}' } }] }, 'tool_calls', { usage: USAGE_1 }),
      completion({ content: 'the tool said grabbed x' }, 'stop', { usage: { prompt_tokens: 40, completion_tokens: 6 } }),
    );
    const spec = `{ temperature: 0.2, max_tokens: 99, seed: 5, stop: [END]${m.spec === 'v4' ? ', reasoning_effort: low' : ''} }`;
    const src = `---\nmodels:\n  default: ${spec}\n---\n` + GRAB.replace('return models.loop()', 'return models.loop() .. "|" .. sys.model');
    const model = local();
    assert.equal(model.specificationVersion, m.spec);
    const events = [];
    const outcome = await run(src, aiSdkModel(model), { onEvent: (e) => events.push(e) });
    assert.equal(outcome.result, 'the tool said grabbed x|small-2026', JSON.stringify(outcome.error));
    assert.equal(requests.length, 2);
    assert.equal(requests[0].url, '/v1/chat/completions');
    const { messages, tools, ...rest } = requests[0].body;
    assert.deepEqual(rest, { model: 'small', temperature: 0.2, max_tokens: 99, seed: 5, stop: ['END'], ...(m.spec === 'v4' && { reasoning_effort: 'low' }) });
    assert.deepEqual(tools, [{ type: 'function', function: { name: 'grab', description: 'Grab a value', parameters: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] } } }]);
    assert.deepEqual(requests[1].body.messages.slice(1), [
      { role: 'assistant', content: null, reasoning_content: 'grab it', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'grab', arguments: '{"value":"x"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'grabbed x' },
    ]);
    assert.deepEqual(events.filter((e) => e.event === 'model_usage').map((e) => e.usage), [
      { input_tokens: 30, output_tokens: 4, cached_tokens: 10, reasoning_tokens: 3 }, { input_tokens: 40, output_tokens: 6, ...(m.spec !== 'v2' && { cached_tokens: 0, reasoning_tokens: 0 }) },
    ]);
    assert.deepEqual(outcome.usage, { default: { calls: 2, input_tokens: 70, output_tokens: 10, cached_tokens: 10, reasoning_tokens: 3 } });
    assert.deepEqual(warnings(events), []);
  });

  test(name('a streamed tool loop: deltas as events, the call assembled, usage from the last chunk'), opts, async () => {
    requests.length = 0;
    script.push(
      sse([chunk({ role: 'assistant', reasoning_content: 'hm' }), chunk({ tool_calls: [{ index: 0, id: 'call_s', type: 'function', function: { name: 'grab', arguments: '' } }] }), chunk({ tool_calls: [{ index: 0, function: { arguments: '{"value":' } }] }), chunk({ tool_calls: [{ index: 0, function: { arguments: '"z"}' } }] }), chunk({}, 'tool_calls'), { ...chunk({}), choices: [], usage: USAGE_1 }]),
      sse([chunk({ role: 'assistant', content: 'Hel' }), chunk({ content: 'lo' }), chunk({}, 'stop'), { ...chunk({}), choices: [], usage: { prompt_tokens: 8, completion_tokens: 2 } }]),
    );
    const events = [];
    const src = GRAB.replace('return models.loop()', 'return models.loop() .. "|" .. messages[3].content');
    const outcome = await run(src, aiSdkModel(local(), { stream: true }), { onEvent: (e) => events.push(e) });
    assert.equal(outcome.result, 'Hello|grabbed z', JSON.stringify(outcome.error));
    assert.equal(requests[0].body.stream, true);
    assert.deepEqual(events.filter((e) => e.event === 'model_delta').map((e) => [e.turn, e.text ?? { reasoning: e.reasoning }]), [[1, { reasoning: 'hm' }], [2, 'Hel'], [2, 'lo']]);
    assert.deepEqual(requests[1].body.messages[1].tool_calls, [{ id: 'call_s', type: 'function', function: { name: 'grab', arguments: '{"value":"z"}' } }]);
    assert.deepEqual(outcome.usage, { default: { calls: 2, input_tokens: 38, output_tokens: 6, cached_tokens: 10, reasoning_tokens: 3 } });
  });

  test(name('a 429 with retry-after-ms is retried; a 400 is a Model error with the provider message'), opts, async () => {
    requests.length = 0;
    script.push(json(429, { error: { message: 'slow down', type: 'rate_limit' } }, { 'retry-after-ms': '50' }), completion({ content: 'after' }, 'stop'));
    const model = aiSdkModel(local(), { retryDelayMs: 1 });
    const events = [];
    assert.equal((await run(INFER, model, { onEvent: (e) => events.push(e) })).result, 'after');
    assert.deepEqual(events.filter((e) => e.event === 'model_retry').map((e) => [e.delay_ms, e.reason]), [[50, 'the model provider answered 429: slow down']]);
    script.push(json(400, { error: { message: 'bad tool schema', type: 'invalid_request_error' } }));
    const outcome = await run(INFER, model);
    assert.deepEqual(failed(outcome), { kind: 'Model', message: 'the model provider answered 400: bad tool schema' });
    assert.equal(requests.length, 3);
  });
}

test("the declarations take each major's language models: tsc on pkg-tests/fixtures/ai-sdk-types.ts", async () => {
  // Types only, so AI SDK 7's declarations are checked under Node 20 too.
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const flags = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', '--types', 'node'];
  const { stdout } = await promisify(execFile)(process.execPath, [tsc, ...flags, join(ROOT, 'pkg-tests/fixtures/ai-sdk-types.ts')], { cwd: ROOT }).catch((e) => assert.fail(e.stdout || e.message));
  assert.equal(stdout, '');
});

test('under Node 22 and later every major runs: none is skipped', { skip: NODE < 22 && `the AI SDK 7 tests need Node >= 22; this is Node ${process.versions.node}: run ${NODE24}` }, () => {
  assert.deepEqual(MAJORS.filter((m) => m.skip).map((m) => m.sdk), []);
  assert.equal(typeof MAJORS.at(-1).Mock, 'function', 'AI SDK 7 (ai7) is installed');
});
