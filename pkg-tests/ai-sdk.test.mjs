// aiSdkModel: a Vercel AI SDK language model (LanguageModelV2, AI SDK 5) as a Runvil model function.
// Driven two ways: with the SDK's own mock model (`MockLanguageModelV2` from `ai/test`, which records
// the call options it gets), and with `@ai-sdk/openai-compatible` pointed at the local
// chat-completions server (the real provider code, over HTTP). Both end to end through prompts with
// tool loops. What differs between the specification versions (v2, v3, v4: AI SDK 5, 6, 7) is
// driven for each in ai-sdk-versions.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MockLanguageModelV2 } from 'ai/test';
import { APICallError, simulateReadableStream } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createEngine, aiSdkModel } from '../pkg/index.js';
import { localProvider } from './helpers.mjs';

const engine = await createEngine();
const usage = (inputTokens, outputTokens, more = {}) => ({ inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, ...more });
const text = (t, finishReason = 'stop', extra = {}) => ({ content: [{ type: 'text', text: t }], finishReason, usage: usage(1, 1), warnings: [], ...extra });
const call = (toolName, input, extra = {}) => ({ content: [{ type: 'tool-call', toolCallId: 'call_1', toolName, input }], finishReason: 'tool-calls', usage: usage(1, 1), warnings: [], ...extra });
const INFER = '# T\n\n## Main\n\n```lua\nreturn models.infer("hello")\n```\n';
/** Main offers the local tool `grab` and runs the loop. */
const GRAB = '# T\n\n## Main\n\n```lua\ntools.offer_local("grab", "Grab a value", { value = "string" }, function(args) return "grabbed " .. tostring(args.value) end)\nmessages:user("please grab x")\nreturn models.loop()\n```\n';
const run = (src, model, extra = {}) => engine.run(src, { models: { default: model }, ...extra });

// ---- with the SDK's mock model ----------------------------------------------------------------

test('a tool loop through a prompt: prompt, tools and role spec options in the specification\'s shapes; calls, text, reasoning, usage and model back', async () => {
  const mock = new MockLanguageModelV2({
    modelId: 'mock-1',
    doGenerate: [
      {
        content: [{ type: 'reasoning', text: 'I should grab.' }, { type: 'text', text: 'Grabbing.' }, { type: 'tool-call', toolCallId: 'call_g', toolName: 'grab', input: '{"value":"x"}' }],
        finishReason: 'tool-calls', usage: usage(100, 10, { cachedInputTokens: 40, reasoningTokens: 5 }), warnings: [], response: { modelId: 'mock-1-2026' },
      },
      { content: [{ type: 'text', text: 'Done: ' }, { type: 'text', text: 'x' }], finishReason: 'stop', usage: usage(120, 20), warnings: [] },
    ],
  });
  const front = '---\nmodels:\n  writer:\n    model: mock-1\n    description: writes\n    temperature: 0.2\n    max_tokens: 300\n    seed: 7\n    top_p: 0.5\n    top_k: 3\n    stop: END\n    presence_penalty: 0.1\n    frequency_penalty: 0.3\n    response_format: { type: json_schema, json_schema: { name: out, schema: { type: object } } }\n    tool_choice: grab\n    providerOptions: { openai: { user: u1 } }\n    params: { custom: 1 }\n---\n';
  const src = `${front}# T\n\n## Main\n\n\`\`\`lua\nmodels.use("writer")\nmessages:system("be brief")\ntools.offer_local("grab", "Grab a value", { value = "string" }, function(args) return "grabbed " .. args.value end)\nmessages:user("please grab x")\nreturn models.loop() .. "|" .. sys.model .. "|" .. messages[3].tool_calls[1].id .. "|" .. messages[3].content\n\`\`\`\n`;
  const events = [];
  const outcome = await engine.run(src, { models: { writer: aiSdkModel(mock) }, onEvent: (e) => events.push(e) });
  assert.equal(outcome.result, 'Done: x|mock-1|call_g|Grabbing.');
  assert.equal(mock.doGenerateCalls.length, 2);
  const [first, second] = mock.doGenerateCalls;
  const { prompt, abortSignal, ...options } = first;
  assert.ok(abortSignal instanceof AbortSignal);
  assert.deepEqual(options, {
    custom: 1, temperature: 0.2, maxOutputTokens: 300, seed: 7, topP: 0.5, topK: 3, stopSequences: ['END'],
    presencePenalty: 0.1, frequencyPenalty: 0.3, responseFormat: { type: 'json', name: 'out', schema: { type: 'object' } },
    toolChoice: { type: 'tool', toolName: 'grab' }, providerOptions: { openai: { user: 'u1' } },
    tools: [{ type: 'function', name: 'grab', description: 'Grab a value', inputSchema: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] } }],
  });
  assert.deepEqual(prompt, [{ role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'please grab x' }] }]);
  assert.deepEqual(second.prompt.slice(2), [
    { role: 'assistant', content: [{ type: 'reasoning', text: 'I should grab.' }, { type: 'text', text: 'Grabbing.' }, { type: 'tool-call', toolCallId: 'call_g', toolName: 'grab', input: { value: 'x' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_g', toolName: 'grab', output: { type: 'text', value: 'grabbed x' } }] },
  ]);
  assert.deepEqual(outcome.usage, { writer: { calls: 2, input_tokens: 220, output_tokens: 30, cached_tokens: 40, reasoning_tokens: 5 } });
  assert.deepEqual(events.filter((e) => e.event === 'model_usage').map((e) => e.usage), [
    { input_tokens: 100, output_tokens: 10, cached_tokens: 40, reasoning_tokens: 5 }, { input_tokens: 120, output_tokens: 20 },
  ]);
  assert.deepEqual(events.filter((e) => e.event === 'model_warning'), [], 'every option of this spec was sent');
});

test('the call options: host defaults under the role spec, the adapter\'s own keys kept, no toolChoice without tools, OpenAI-style tool choices', async () => {
  const mock = new MockLanguageModelV2({ doGenerate: async () => text('ok') });
  const model = aiSdkModel(mock, { callOptions: { temperature: 1, maxOutputTokens: 50, providerOptions: { openai: { a: 1 } }, prompt: 'not this', tools: 'nor this' } });
  const front = (spec) => `---\nmodels:\n  default: ${spec}\n---\n`;
  await run(front('{ temperature: 0.5, tool_choice: required, providerOptions: { openai: { b: 2 }, other: { c: 3 } }, params: { abortSignal: 1, includeRawChunks: true } }') + INFER, model);
  const { prompt, abortSignal, ...options } = mock.doGenerateCalls[0];
  assert.deepEqual(options, { temperature: 0.5, maxOutputTokens: 50, providerOptions: { openai: { a: 1, b: 2 }, other: { c: 3 } } });
  assert.deepEqual(prompt, [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }]);
  assert.ok(abortSignal instanceof AbortSignal);
  mock.doGenerateCalls.length = 0;
  for (const [choice, expected] of [['none', { type: 'none' }], ['{ type: function, function: { name: grab } }', { type: 'tool', toolName: 'grab' }], ['{ type: required }', { type: 'required' }]]) {
    mock.doGenerateCalls.length = 0;
    await run(front(`{ tool_choice: ${choice} }`) + GRAB, model);
    assert.deepEqual(mock.doGenerateCalls[0].toolChoice, expected);
  }
});

test('what is not sent is said: role spec options that are not call options, another model id, the provider\'s warnings', async () => {
  const mock = new MockLanguageModelV2({ modelId: 'm-a', doGenerate: async () => text('ok', 'stop', { warnings: [{ type: 'unsupported-setting', setting: 'seed', details: 'no seeds here' }, { type: 'other', message: 'beware' }] }) });
  const events = [];
  const src = '---\nmodels:\n  default: { model: m-b, seed: 3, reasoning_effort: low, stop: 42 }\n---\n' + INFER;
  const outcome = await run(src, aiSdkModel(mock), { onEvent: (e) => events.push(e) });
  assert.equal(outcome.result, 'ok');
  assert.equal(mock.doGenerateCalls[0].seed, 3);
  assert.equal(mock.doGenerateCalls[0].stopSequences, undefined);
  assert.deepEqual(events.filter((e) => e.event === 'model_warning').map((e) => e.message), [
    'role spec options not sent (not AI SDK v2 call options, or values they cannot take; provider-specific ones go in providerOptions): reasoning_effort, stop',
    "the role asks for model m-b; aiSdkModel serves the model it was given (m-a); pick models per role with engine.run's models function",
    'the provider does not support the setting seed: no seeds here',
    'beware',
  ]);
});

test('finish reasons: content-filter and error are Model errors (a filtered reply with text keeps it), length is length, tool calls win over other reasons', async () => {
  const model = (reply) => aiSdkModel(new MockLanguageModelV2({ doGenerate: async () => reply }));
  const LOOP = '# T\n\n## Main\n\n```lua\nmessages:user("x")\nlocal ok, r = pcall(models.loop)\nif not ok then return r.kind .. "|" .. r.message end\nreturn r .. "|" .. sys.reply_finish_reason\n```\n';
  assert.equal((await run(LOOP, model(text('', 'content-filter')))).result, "model|the provider's content filter withheld the reply (finish reason content-filter)");
  assert.equal((await run(LOOP, model(text('partial an', 'content-filter')))).result, 'partial an|content_filter');
  assert.equal((await run(LOOP, model(text('half', 'error')))).result, 'model|the model provider ended the reply with an error (finish reason error)');
  assert.equal((await run(LOOP, model(text('cut sho', 'length')))).result, 'cut sho|length');
  assert.equal((await run(LOOP, model(text('fine', 'other')))).result, 'fine|stop');
  // A reply that is neither an object nor has content.
  const odd = await run(INFER, aiSdkModel(new MockLanguageModelV2({ doGenerate: async () => 'text' })));
  assert.deepEqual(odd.error, { kind: 'Model', message: 'the AI SDK model answered with something that is not a result object', section: '## Main', line: 6 });
  // Tool calls with stop as their reason, input "" and no id.
  const replies = [];
  const mock = new MockLanguageModelV2({ doGenerate: [{ content: [{ type: 'tool-call', toolCallId: '', toolName: 'grab', input: '' }], finishReason: 'stop', usage: usage(1, 1), warnings: [] }, text('after')] });
  const inner = aiSdkModel(mock);
  const outcome = await run(GRAB, async (r) => { const x = await inner(r); replies.push(x); return x; });
  assert.equal(outcome.result, 'after');
  assert.deepEqual(replies[0].tool_calls, [{ id: 'call_1_0', name: 'grab', arguments: {} }]);
  assert.equal(replies[0].finish_reason, 'tool_calls');
});

test('provider errors: APICallError retried when isRetryable (honouring retry-after-ms), not when not; bounded; other errors named', async () => {
  const apiError = (statusCode, message, responseHeaders) => new APICallError({ message, url: 'http://provider.test/v1/x', requestBodyValues: {}, statusCode, responseHeaders });
  const script = (...steps) => new MockLanguageModelV2({ doGenerate: async () => { const s = steps.shift(); if (s instanceof Error) throw s; return s; } });
  const seen = [];
  const events = [];
  let mock = script(apiError(429, 'slow down', { 'retry-after-ms': '80' }), apiError(503, 'unavailable'), new APICallError({ message: 'Cannot connect to API: ECONNREFUSED', url: 'u', requestBodyValues: {}, isRetryable: true }), text('finally'));
  const t0 = Date.now();
  let outcome = await run(INFER, aiSdkModel(mock, { maxRetries: 3, retryDelayMs: 1, onRetry: (i) => seen.push(i) }), { onEvent: (e) => events.push(e) });
  assert.equal(outcome.result, 'finally', JSON.stringify(outcome));
  assert.equal(mock.doGenerateCalls.length, 4);
  assert.ok(Date.now() - t0 >= 75, 'retry-after-ms is honoured');
  assert.deepEqual(seen.map((i) => [i.attempt, i.reason]), [
    [2, 'the model provider answered 429: slow down'], [3, 'the model provider answered 503: unavailable'], [4, 'the model provider could not be reached (Cannot connect to API: ECONNREFUSED)'],
  ]);
  assert.equal(seen[0].delay_ms, 80);
  assert.deepEqual(events.filter((e) => e.event === 'model_retry').map((e) => e.attempt), [2, 3, 4]);

  mock = script(apiError(400, 'bad request'), text('never'));
  outcome = await run(INFER, aiSdkModel(mock, { retryDelayMs: 1 }));
  assert.deepEqual(outcome.error, { kind: 'Model', message: 'the model provider answered 400: bad request', section: '## Main', line: 6 });
  assert.equal(mock.doGenerateCalls.length, 1);

  mock = script(apiError(500, 'down'), apiError(500, 'down'), apiError(500, 'down'), text('never'));
  outcome = await run(INFER, aiSdkModel(mock, { retryDelayMs: 1 }));
  assert.equal(outcome.error.message, 'the model provider answered 500: down (after 3 attempts)');

  mock = script(apiError(429, 'quota', { 'retry-after': '3600' }));
  outcome = await run(INFER, aiSdkModel(mock));
  assert.match(outcome.error.message, /^the model provider answered 429: quota; the provider asked to retry after 3600 s, longer than maxRetryAfterMs$/);

  const unsupported = Object.assign(new Error("'image/tiff' file parts are not supported"), { name: 'AI_UnsupportedFunctionalityError' });
  outcome = await run(INFER, aiSdkModel(script(unsupported)));
  assert.equal(outcome.error.message, "the AI SDK model failed (AI_UnsupportedFunctionalityError): 'image/tiff' file parts are not supported");
  outcome = await run(INFER, aiSdkModel(script(new TypeError('x is not a function'))));
  assert.equal(outcome.error.message, 'the AI SDK model failed: x is not a function');
});

test('the run\'s signal is the call\'s abortSignal; a provider that ignores it, or never answers, cannot keep the run waiting', async () => {
  let seen;
  const polite = new MockLanguageModelV2({ doGenerate: (options) => new Promise((_, reject) => { seen = options.abortSignal; options.abortSignal.addEventListener('abort', () => reject(new Error('aborted'))); }) });
  let outcome = await run(INFER, aiSdkModel(polite), { signal: AbortSignal.timeout(100) });
  assert.equal(outcome.error.kind, 'Cancelled');
  assert.equal(seen.aborted, true);

  const deaf = new MockLanguageModelV2({ doGenerate: () => new Promise(() => {}) });
  outcome = await run(INFER, aiSdkModel(deaf), { signal: AbortSignal.timeout(100) });
  assert.equal(outcome.error.kind, 'Cancelled');

  outcome = await run(INFER, aiSdkModel(deaf, { timeoutMs: 100, maxRetries: 1, retryDelayMs: 1 }));
  assert.deepEqual(outcome.error, { kind: 'Model', message: 'the model provider did not answer within 100 ms (after 2 attempts)', section: '## Main', line: 6 });
  assert.equal(deaf.doGenerateCalls.length, 3);
  assert.equal(deaf.doGenerateCalls[2].abortSignal.aborted, true, 'a timed-out attempt is aborted');
});

test('a call to a tool that was not offered is answered inside the round; after the repairs the engine refuses it', async () => {
  const mock = new MockLanguageModelV2({ doGenerate: [call('rogue', '{}'), call('grab', '{"value":"y"}'), text('done')] });
  const events = [];
  const outcome = await run(GRAB, aiSdkModel(mock), { onEvent: (e) => events.push(e) });
  assert.equal(outcome.result, 'done');
  assert.deepEqual(mock.doGenerateCalls[1].prompt.slice(1), [
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'rogue', input: {} }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'rogue', output: { type: 'text', value: 'error: there is no tool named "rogue"; the tools offered are ["grab"]' } }] },
  ]);
  assert.equal(mock.doGenerateCalls[2].prompt.length, 3, 'the repaired exchange stays inside its round');
  assert.deepEqual(events.filter((e) => e.event === 'model_unknown_tool').map((e) => e.names), [['rogue']]);
  assert.deepEqual(outcome.usage.default, { calls: 2, input_tokens: 3, output_tokens: 3, cached_tokens: 0, reasoning_tokens: 0 }, 'the repair call\'s usage is counted');

  const stubborn = new MockLanguageModelV2({ doGenerate: async () => call('rogue', '{}') });
  const refused = await run(GRAB, aiSdkModel(stubborn));
  assert.equal(refused.error.kind, 'Tool');
  assert.match(refused.error.message, /tool "rogue" is not in this section's scope/);
  assert.equal(stubborn.doGenerateCalls.length, 2);
});

test('the results of one turn\'s calls go back in one tool message, in call order', async () => {
  const two = { content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'grab', input: '{"value":"a"}' }, { type: 'tool-call', toolCallId: 'c2', toolName: 'grab', input: '{"value":"b"}' }], finishReason: 'tool-calls', usage: usage(1, 1), warnings: [] };
  const mock = new MockLanguageModelV2({ doGenerate: [two, text('both')] });
  assert.equal((await run(GRAB, aiSdkModel(mock))).result, 'both');
  assert.deepEqual(mock.doGenerateCalls[1].prompt.slice(2), [{ role: 'tool', content: [
    { type: 'tool-result', toolCallId: 'c1', toolName: 'grab', output: { type: 'text', value: 'grabbed a' } },
    { type: 'tool-result', toolCallId: 'c2', toolName: 'grab', output: { type: 'text', value: 'grabbed b' } },
  ] }]);
});

test('tool names the providers refuse (over 64 characters) are shortened and mapped back', async () => {
  const pack = { name: 'a-rather-long-pack-name-for-testing-wire-names', description: 'Long.', tools: [{ name: 'look_up_everything_about_something', description: 'Look up.', parameters: { type: 'object', properties: {} }, trust: 'trusted', call: async () => 'looked up' }] };
  const mock = new MockLanguageModelV2({ doGenerate: async (o) => (o.prompt.length === 1 ? call(o.tools[0].name, '{}') : text('ok')) });
  const src = `---\nuses: [${pack.name}]\n---\n# T\n\n## Main\n\n\`\`\`lua\ntools.offer("${pack.name}/look_up_everything_about_something")\nmessages:user("go")\nreturn models.loop() .. "|" .. messages[2].tool_calls[1].name\n\`\`\`\n`;
  const outcome = await run(src, aiSdkModel(mock), { packs: [pack] });
  assert.equal(outcome.result, 'ok|a-rather-long-pack-name-for-testing-wire-names_look_up_everything_about_something');
  const wire = mock.doGenerateCalls[0].tools[0].name;
  assert.ok(wire.length <= 64 && /^[A-Za-z0-9_-]+$/.test(wire), wire);
  assert.equal(mock.doGenerateCalls[1].prompt[1].content[0].toolName, wire);
});

const part = {
  text: (delta) => ({ type: 'text-delta', id: 't', delta }),
  reasoning: (delta) => ({ type: 'reasoning-delta', id: 'r', delta }),
  finish: (finishReason, u = usage(12, 5, { reasoningTokens: 2 })) => ({ type: 'finish', finishReason, usage: u }),
};
const streamOf = (chunks) => ({ stream: simulateReadableStream({ chunks, chunkDelayInMs: 1 }) });

test('streaming through doStream: a tool loop with text and reasoning deltas as model_delta events, the same result, usage', async () => {
  const mock = new MockLanguageModelV2({
    doStream: [
      streamOf([
        { type: 'stream-start', warnings: [] },
        { type: 'reasoning-start', id: 'r' }, part.reasoning('I will '), part.reasoning('grab.'), { type: 'reasoning-end', id: 'r' },
        { type: 'tool-input-start', id: 'call_s', toolName: 'grab' }, { type: 'tool-input-delta', id: 'call_s', delta: '{"value":"x"}' }, { type: 'tool-input-end', id: 'call_s' },
        { type: 'tool-call', toolCallId: 'call_s', toolName: 'grab', input: '{"value":"x"}' }, part.finish('tool-calls'),
      ]),
      streamOf([{ type: 'response-metadata', modelId: 'm-stream' }, { type: 'text-start', id: 't' }, part.text('Hel'), part.text('lo, '), part.text('world'), { type: 'text-end', id: 't' }, part.finish('stop')]),
    ],
  });
  const events = [];
  const src = GRAB.replace('return models.loop()', 'return models.loop() .. "|" .. sys.model .. "|" .. messages[3].content');
  const outcome = await run(src, aiSdkModel(mock, { stream: true }), { onEvent: (e) => events.push(e) });
  assert.equal(outcome.result, 'Hello, world|m-stream|grabbed x');
  assert.equal(mock.doGenerateCalls.length, 0);
  assert.equal(mock.doStreamCalls.length, 2);
  assert.deepEqual(mock.doStreamCalls[1].prompt[1].content[0], { type: 'reasoning', text: 'I will grab.' });
  const deltas = events.filter((e) => e.event === 'model_delta');
  assert.deepEqual(deltas.map((e) => [e.turn, e.text ?? null, e.reasoning ?? null]), [
    [1, null, 'I will '], [1, null, 'grab.'], [2, 'Hel', null], [2, 'lo, ', null], [2, 'world', null],
  ]);
  assert.equal(deltas[0].section, 'Main');
  assert.ok(events.indexOf(deltas[1]) < events.findIndex((e) => e.event === 'model_turn_completed'), 'deltas come before their round completes');
  assert.deepEqual(outcome.usage, { default: { calls: 2, input_tokens: 24, output_tokens: 10, cached_tokens: 0, reasoning_tokens: 4 } });
});

test('streaming: an error after text was reported is final; before any text a retryable one is retried; finish reasons as without streaming', async () => {
  const apiError = new APICallError({ message: 'overloaded', url: 'u', requestBodyValues: {}, statusCode: 502 });
  let mock = new MockLanguageModelV2({ doStream: [streamOf([part.text('partial'), { type: 'error', error: { message: 'upstream died' } }]), streamOf([part.text('never')])] });
  let outcome = await run(INFER, aiSdkModel(mock, { stream: true, retryDelayMs: 1 }));
  assert.deepEqual(outcome.error, { kind: 'Model', message: "the model provider's stream broke off (the model provider answered with an error: upstream died)", section: '## Main', line: 6 });
  assert.equal(mock.doStreamCalls.length, 1);

  const steps = [() => { throw apiError; }, () => streamOf([{ type: 'error', error: { message: 'busy', code: 503 } }]), () => streamOf([part.text('second'), part.finish('stop')])];
  mock = new MockLanguageModelV2({ doStream: async () => steps.shift()() });
  const events = [];
  outcome = await run(INFER, aiSdkModel(mock, { stream: true, retryDelayMs: 1 }), { onEvent: (e) => events.push(e) });
  assert.equal(outcome.result, 'second');
  assert.deepEqual(events.filter((e) => e.event === 'model_retry').map((e) => e.reason), ['the model provider answered 502: overloaded', 'the model provider answered with an error: busy']);

  mock = new MockLanguageModelV2({ doStream: async () => streamOf([part.finish('content-filter')]) });
  outcome = await run(INFER, aiSdkModel(mock, { stream: true }));
  assert.equal(outcome.error.message, "the provider's content filter withheld the reply (finish reason content-filter)");

  mock = new MockLanguageModelV2({ doStream: async () => ({ stream: new ReadableStream({ start(c) { c.enqueue(part.text('stalls')); } }) }) });
  outcome = await run(INFER, aiSdkModel(mock, { stream: true, timeoutMs: 100 }));
  assert.equal(outcome.error.message, "the model provider's stream broke off (the model provider did not answer within 100 ms)");
  assert.equal(mock.doStreamCalls.length, 1);
});

test('aiSdkModel checks what it is given', () => {
  const mock = new MockLanguageModelV2();
  assert.throws(() => aiSdkModel('gpt-4o'), { name: 'TypeError', message: "aiSdkModel: pass the provider's model object (e.g. openai('gpt-4o')), not a model id string" });
  assert.throws(() => aiSdkModel(undefined), { name: 'TypeError', message: 'aiSdkModel: languageModel must be an AI SDK language model (an object with doGenerate and doStream)' });
  const v1 = { specificationVersion: 'v1', provider: 'old', modelId: 'm', defaultObjectGenerationMode: 'json', doGenerate: async () => ({}), doStream: async () => ({}) };
  assert.throws(() => aiSdkModel(v1), { name: 'TypeError', message: 'aiSdkModel: the model implements the AI SDK language model specification v1; aiSdkModel speaks v2, v3 and v4 (the providers of AI SDK 5, 6 and 7)' });
  assert.throws(() => aiSdkModel({ ...v1, specificationVersion: 'v2', doStream: undefined }, { stream: true }), /stream: true needs a model with a doStream method/);
  assert.throws(() => aiSdkModel(mock, { stream: 'yes' }), /stream must be a boolean/);
  assert.throws(() => aiSdkModel(mock, { maxRetries: -1 }), /maxRetries must be a non-negative integer/);
  assert.throws(() => aiSdkModel(mock, { callOptions: 3 }), /callOptions must be an object/);
  assert.equal(typeof aiSdkModel(mock), 'function');
});

// ---- with @ai-sdk/openai-compatible against the local server ----------------------------------

const requests = [];
/** Scripted answers, first first: (body, res) => void. */
const script = [];
let provider;
let local;

before(async () => {
  provider = await localProvider((body, req, res) => {
    requests.push({ url: req.url, auth: req.headers.authorization, body });
    script.shift()(body, res);
  });
  local = createOpenAICompatible({ name: 'local', baseURL: provider.baseURL, apiKey: 'sk-local' });
});
after(() => provider.close());

const json = (status, payload, headers = {}) => (_body, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(payload));
};
const completion = (message, finish_reason, extra = {}) => json(200, { id: 'c', object: 'chat.completion', created: 1, model: 'small-2026', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason }], ...extra });
function sse(events) {
  return (_body, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let i = 0;
    const next = () => {
      if (i === events.length) return res.end('data: [DONE]\n\n');
      res.write(`data: ${JSON.stringify(events[i++])}\n\n`);
      setTimeout(next, 2);
    };
    next();
  };
}
const chunk = (delta, finish_reason = null, extra = {}) => ({ id: 's', object: 'chat.completion.chunk', created: 1, model: 'small-s', choices: [{ index: 0, delta, finish_reason }], ...extra });

test('openai-compatible over HTTP: a tool loop end to end, options by name, usage, reasoning sent back', async () => {
  requests.length = 0;
  script.push(
    completion({ content: null, reasoning_content: 'grab it', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'grab', arguments: '{"value":"x"}' } }] }, 'tool_calls', { usage: { prompt_tokens: 30, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 10 } } }),
    completion({ content: 'the tool said grabbed x' }, 'stop', { usage: { prompt_tokens: 40, completion_tokens: 6 } }),
  );
  const src = '---\nmodels:\n  default: { temperature: 0.2, max_tokens: 99, seed: 5, stop: [END] }\n---\n' + GRAB.replace('return models.loop()', 'return models.loop() .. "|" .. sys.model');
  const outcome = await run(src, aiSdkModel(local.chatModel('small')));
  assert.equal(outcome.result, 'the tool said grabbed x|small-2026');
  assert.equal(requests.length, 2);
  assert.equal(requests[0].url, '/v1/chat/completions');
  assert.equal(requests[0].auth, 'Bearer sk-local');
  const { messages, tools, ...rest } = requests[0].body;
  assert.deepEqual(rest, { model: 'small', temperature: 0.2, max_tokens: 99, seed: 5, stop: ['END'] });
  assert.deepEqual(tools, [{ type: 'function', function: { name: 'grab', description: 'Grab a value', parameters: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] } } }]);
  assert.deepEqual(requests[1].body.messages.slice(1), [
    { role: 'assistant', content: null, reasoning_content: 'grab it', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'grab', arguments: '{"value":"x"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'grabbed x' },
  ]);
  assert.deepEqual(outcome.usage, { default: { calls: 2, input_tokens: 70, output_tokens: 10, cached_tokens: 10, reasoning_tokens: 0 } });
});

test('openai-compatible over HTTP: streaming a tool loop, deltas as events', async () => {
  requests.length = 0;
  script.push(
    sse([chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_s', type: 'function', function: { name: 'grab', arguments: '' } }] }), chunk({ tool_calls: [{ index: 0, function: { arguments: '{"value":' } }] }), chunk({ tool_calls: [{ index: 0, function: { arguments: '"z"}' } }] }), chunk({}, 'tool_calls')]),
    sse([chunk({ role: 'assistant', content: 'Hel' }), chunk({ content: 'lo' }), chunk({}, 'stop'), { id: 's', object: 'chat.completion.chunk', created: 1, model: 'small-s', choices: [], usage: { prompt_tokens: 8, completion_tokens: 2 } }]),
  );
  const events = [];
  const outcome = await run(GRAB.replace('return models.loop()', 'return models.loop() .. "|" .. messages[3].content'), aiSdkModel(local.chatModel('small'), { stream: true }), { onEvent: (e) => events.push(e) });
  assert.equal(outcome.result, 'Hello|grabbed z');
  assert.equal(requests[0].body.stream, true);
  assert.deepEqual(events.filter((e) => e.event === 'model_delta').map((e) => [e.turn, e.text]), [[2, 'Hel'], [2, 'lo']]);
  assert.deepEqual(requests[1].body.messages[1].tool_calls, [{ id: 'call_s', type: 'function', function: { name: 'grab', arguments: '{"value":"z"}' } }]);
  assert.equal(outcome.usage.default.input_tokens, 8);
});

test('openai-compatible over HTTP: a 429 with retry-after-ms is retried, a 400 is a Model error with the provider message', async () => {
  requests.length = 0;
  script.push(json(429, { error: { message: 'slow down', type: 'rate_limit' } }, { 'retry-after-ms': '50' }), completion({ content: 'after' }, 'stop'));
  const model = aiSdkModel(local.chatModel('small'), { retryDelayMs: 1 });
  const events = [];
  assert.equal((await run(INFER, model, { onEvent: (e) => events.push(e) })).result, 'after');
  assert.deepEqual(events.filter((e) => e.event === 'model_retry').map((e) => [e.delay_ms, e.reason]), [[50, 'the model provider answered 429: slow down']]);
  script.push(json(400, { error: { message: 'bad tool schema', type: 'invalid_request_error' } }));
  const outcome = await run(INFER, model);
  assert.deepEqual(outcome.error, { kind: 'Model', message: 'the model provider answered 400: bad tool schema', section: '## Main', line: 6 });
  assert.equal(requests.length, 3);
});
