// openAIChatModel against a local HTTP server that speaks the chat-completions protocol (never a
// real provider): plain replies, tool calls through models.loop, a provider error, the CLI; then
// the provider behaviours (retries, timeouts, reply shapes, options, usage, names; docs/providers.md).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createEngine, openAIChatModel } from '../pkg/index.js';
import { PKG, localProvider } from './helpers.mjs';

const requests = [];
/** Scripted answers for the next requests, first first: (body, req, res) => [status, payload, headers] | undefined (answered by hand). */
const script = [];
let provider;
let baseURL;

/** The fake provider: model 'broken' fails, a user turn asking to grab gets a tool call. */
function answer(body) {
  if (body.model === 'broken') return [500, { error: { message: 'the model is overloaded', type: 'server_error' } }];
  const last = body.messages.at(-1);
  const reply = (message, finish) => [200, { id: 'cmpl-1', model: `${body.model}-2026`, choices: [{ index: 0, message, finish_reason: finish }] }];
  if (last.role === 'user' && last.content.includes('grab') && body.tools) {
    return reply({ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'grab', arguments: '{"value":"x"}' } }] }, 'tool_calls');
  }
  if (last.role === 'tool') return reply({ role: 'assistant', content: `the tool said: ${last.content}` }, 'stop');
  return reply({ role: 'assistant', content: `echo: ${last.content}` }, 'stop');
}

before(async () => {
  provider = await localProvider((body, req, res) => {
    requests.push({ url: req.url, auth: req.headers.authorization, apiKey: req.headers['api-key'], body, at: Date.now() });
    if (script.length) {
      const answered = script.shift()(body, req, res);
      if (!answered) return;
      const [status, payload, headers = {}] = answered;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
      return;
    }
    const [status, payload] = req.url.startsWith('/v1/chat/completions') ? answer(body) : [404, { error: { message: 'no such route' } }];
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(payload));
  });
  baseURL = provider.baseURL;
});

after(() => provider.close());

const engine = await createEngine();

test('a plain round: models.infer through the adapter', async () => {
  requests.length = 0;
  const model = openAIChatModel({ baseURL, apiKey: 'sk-test', model: 'small' });
  const outcome = await engine.run('# T\n\n## Main\n\n```lua\nreturn models.infer("hello")\n```\n', { models: { default: model } });
  assert.deepEqual(outcome.result, 'echo: hello');
  assert.equal(requests[0].url, '/v1/chat/completions');
  assert.equal(requests[0].auth, 'Bearer sk-test');
  assert.deepEqual(requests[0].body, { model: 'small', messages: [{ role: 'user', content: 'hello' }] });
});

test('tool calls: the loop runs the local tool and sends the result back', async () => {
  requests.length = 0;
  const model = openAIChatModel({ baseURL, model: 'small' });
  const src = '---\nmodels:\n  writer: { model: tuned, temperature: 0.2 }\n---\n# T\n\n## Main\n\n```lua\nmodels.use("writer")\ntools.offer_local("grab", "Grab a value", { value = "string" }, function(args) return "grabbed " .. args.value end)\nmessages:user("please grab x")\nreturn models.loop() .. "|" .. #messages .. "|" .. messages[2].tool_calls[1].id\n```\n';
  const outcome = await engine.run(src, { models: { writer: model } });
  assert.equal(outcome.result, 'the tool said: grabbed x|4|call_1');
  assert.equal(requests.length, 2);
  assert.equal(requests[0].body.model, 'tuned');
  assert.equal(requests[0].body.temperature, 0.2);
  assert.deepEqual(requests[0].body.tools, [{ type: 'function', function: { name: 'grab', description: 'Grab a value', parameters: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] } } }]);
  assert.deepEqual(requests[1].body.messages.slice(1), [
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'grab', arguments: '{"value":"x"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'grabbed x' },
  ]);
});

test('a provider error is a Model error with the provider message', async () => {
  // A 500 is retried (maxRetries, default 2), so the message says how many attempts were made.
  const model = openAIChatModel({ baseURL, model: 'broken', retryDelayMs: 1 });
  const outcome = await engine.run('# T\n\n## Main\n\n```lua\nreturn models.infer("hello")\n```\n', { models: { default: model } });
  assert.deepEqual(outcome.error, { kind: 'Model', message: 'the model provider answered 500: the model is overloaded (after 3 attempts)', section: '## Main', line: 6 });
  const once = openAIChatModel({ baseURL, model: 'broken', maxRetries: 0 });
  const caught = await engine.run('# T\n\n## Main\n\n```lua\nlocal ok, e = pcall(models.infer, "hello")\nreturn e.kind .. "|" .. e.message\n```\n', { models: { default: once } });
  assert.equal(caught.result, 'model|the model provider answered 500: the model is overloaded');
});

test('an unreachable provider is a Model error', async () => {
  const model = openAIChatModel({ baseURL: 'http://127.0.0.1:9/v1', model: 'small' });
  const outcome = await engine.run('# T\n\n## Main\n\n```lua\nreturn models.infer("hello")\n```\n', { models: { default: model } });
  assert.equal(outcome.error.kind, 'Model');
  assert.match(outcome.error.message, /^the model provider could not be reached/);
});

test('the adapter checks its options', () => {
  assert.throws(() => openAIChatModel({ model: 'x' }), TypeError);
  assert.throws(() => openAIChatModel({ baseURL }), TypeError);
});

test('the CLI runs a prompt with --model openai:<model> against the server', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'runvil-cli-'));
  const file = join(dir, 'p.md');
  writeFileSync(file, '# T\n\n## Main\n\nSay {{ args }}.\n\n```lua\nreturn models.infer(prose)\n```\n');
  const { stdout } = await promisify(execFile)(process.execPath, [join(PKG, 'cli.js'), 'run', file, '--args', 'hi', '--model', 'openai:small'], {
    env: { ...process.env, RUNVIL_OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: 'sk-cli' },
  });
  assert.equal(stdout, 'echo: Say hi.\n');
  assert.equal(requests.at(-1).auth, 'Bearer sk-cli');
});

// ---- the provider behaviours ----------------------------------------------------------------

const INFER = '# T\n\n## Main\n\n```lua\nreturn models.infer("hello")\n```\n';
const ok = (content, extra = {}) => () => [200, { id: 'c', model: 'm-1', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], ...extra }];
const fail = (status, payload, headers) => () => [status, payload, headers];
const toolCall = (name, args, extra = {}) => [200, { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name, arguments: args } }], ...extra }, finish_reason: 'tool_calls' }] }];
/** A prompt whose Main offers the local tool `grab` (no parameters) and runs the loop. */
const GRAB = '# T\n\n## Main\n\n```lua\ntools.offer_local("grab", "Grab", {}, function(args) return "grabbed " .. json.encode(args) end)\nmessages:user("go")\nreturn models.loop()\n```\n';
const echoTool = (body) => [200, { choices: [{ index: 0, message: { role: 'assistant', content: `tool: ${body.messages.at(-1).content}` }, finish_reason: 'stop' }] }];

function reset(...answers) {
  requests.length = 0;
  script.length = 0;
  script.push(...answers);
}

test('retries: 429 with retry-after-ms, 503, HTML 502, 500 and a dropped connection are retried, reported as events and through onRetry', async () => {
  reset(
    fail(429, { error: { message: 'slow down' } }, { 'retry-after-ms': '120' }),
    fail(503, { error: { message: 'unavailable' } }),
    () => [502, '<html><body>Bad Gateway</body></html>', { 'content-type': 'text/html' }],
    (body, req) => { req.socket.destroy(); },
    fail(500, { error: { message: 'oops' } }),
    ok('finally'),
  );
  const seen = [];
  const events = [];
  const model = openAIChatModel({ baseURL, model: 'small', maxRetries: 5, retryDelayMs: 5, onRetry: (info) => seen.push(info) });
  const outcome = await engine.run(INFER, { models: { default: model }, onEvent: (e) => events.push(e) });
  assert.equal(outcome.result, 'finally');
  assert.equal(requests.length, 6);
  assert.ok(requests[1].at - requests[0].at >= 110, 'retry-after-ms is honoured');
  assert.deepEqual(seen.map((i) => i.attempt), [2, 3, 4, 5, 6]);
  assert.equal(seen[0].delay_ms, 120);
  assert.match(seen[0].reason, /answered 429: slow down/);
  assert.match(seen[2].reason, /answered 502: <html>/);
  assert.match(seen[3].reason, /could not be reached/);
  const retries = events.filter((e) => e.event === 'model_retry');
  assert.equal(retries.length, 5);
  assert.equal(typeof retries[0].time, 'number');
  assert.deepEqual({ ...retries[0], delay_ms: 0, time: undefined }, { time: undefined, event: 'model_retry', type: 'model_retry', section: 'Main', role: 'default', turn: 1, attempt: 2, delay_ms: 0, reason: 'the model provider answered 429: slow down' });
});

test('retries: retry-after in seconds is honoured; 400 is not retried; the retries are bounded', async () => {
  reset(fail(429, { error: { message: 'rate limited' } }, { 'retry-after': '1' }), ok('after a second'));
  const model = openAIChatModel({ baseURL, model: 'small', retryDelayMs: 1 });
  assert.equal((await engine.run(INFER, { models: { default: model } })).result, 'after a second');
  assert.ok(requests[1].at - requests[0].at >= 950);

  reset(fail(400, { error: { message: 'bad request' } }), ok('never'));
  const outcome = await engine.run(INFER, { models: { default: model } });
  assert.equal(outcome.error.message, 'the model provider answered 400: bad request');
  assert.equal(requests.length, 1);

  reset(...Array.from({ length: 5 }, () => fail(503, { error: { message: 'down' } })));
  const bounded = await engine.run(INFER, { models: { default: openAIChatModel({ baseURL, model: 'small', maxRetries: 3, retryDelayMs: 1 }) } });
  assert.equal(bounded.error.message, 'the model provider answered 503: down (after 4 attempts)');
  assert.equal(requests.length, 4);
  script.length = 0;
});

test('retries: a retry-after beyond maxRetryAfterMs fails at once with the reason', async () => {
  reset(fail(429, { error: { message: 'quota' } }, { 'retry-after': '3600' }));
  const outcome = await engine.run(INFER, { models: { default: openAIChatModel({ baseURL, model: 'small' }) } });
  assert.equal(outcome.error.kind, 'Model');
  assert.match(outcome.error.message, /^the model provider answered 429: quota; the provider asked to retry after 3600 s/);
  assert.equal(requests.length, 1);
});

test('a server that never answers: the per-attempt timeout ends the call; the run signal cancels a wait or a backoff', async () => {
  const hang = () => undefined; // never answers
  reset(hang, hang);
  const started = Date.now();
  const outcome = await engine.run(INFER, { models: { default: openAIChatModel({ baseURL, model: 'small', timeoutMs: 150, maxRetries: 1, retryDelayMs: 1 }) } });
  assert.equal(outcome.error.kind, 'Model');
  assert.equal(outcome.error.message, 'the model provider did not answer within 150 ms (after 2 attempts)');
  assert.equal(requests.length, 2);
  assert.ok(Date.now() - started < 5000);

  reset(hang);
  const cancelled = await engine.run(INFER, { models: { default: openAIChatModel({ baseURL, model: 'small' }) }, signal: AbortSignal.timeout(200) });
  assert.equal(cancelled.error.kind, 'Cancelled');

  reset(fail(429, { error: { message: 'wait' } }, { 'retry-after': '30' }));
  const t0 = Date.now();
  const inBackoff = await engine.run(INFER, { models: { default: openAIChatModel({ baseURL, model: 'small' }) }, signal: AbortSignal.timeout(200) });
  assert.equal(inBackoff.error.kind, 'Cancelled');
  assert.ok(Date.now() - t0 < 5000, 'the backoff wait is cancelled');
  assert.equal(requests.length, 1);
  script.length = 0;
});

test('tool call arguments "" and the legacy function_call finish mean {}', async () => {
  reset(() => toolCall('grab', ''), echoTool);
  const model = openAIChatModel({ baseURL, model: 'small' });
  assert.equal((await engine.run(GRAB, { models: { default: model } })).result, 'tool: grabbed {}');

  reset(() => [200, { choices: [{ index: 0, message: { role: 'assistant', content: null, function_call: { name: 'grab', arguments: '' } }, finish_reason: 'function_call' }] }], echoTool);
  assert.equal((await engine.run(GRAB, { models: { default: model } })).result, 'tool: grabbed {}');
  const sent = requests[1].body.messages[1];
  assert.equal(sent.tool_calls[0].function.name, 'grab');
  assert.equal(sent.tool_calls[0].function.arguments, '{}');
  assert.equal(requests[1].body.messages[2].tool_call_id, sent.tool_calls[0].id);
});

test('refusals and content filtering are Model errors that say so; content-part arrays are text', async () => {
  const model = openAIChatModel({ baseURL, model: 'small' });
  reset(() => [200, { choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' }, finish_reason: 'stop' }] }]);
  let outcome = await engine.run(INFER, { models: { default: model } });
  assert.deepEqual(outcome.error, { kind: 'Model', message: 'the model refused: I cannot help with that.', section: '## Main', line: 6 });

  reset(() => [200, { choices: [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'content_filter' }] }]);
  outcome = await engine.run('# T\n\n## Main\n\n```lua\nmessages:user("x")\nlocal ok, e = pcall(models.loop)\nreturn e.kind .. "|" .. e.message\n```\n', { models: { default: model } });
  assert.equal(outcome.result, "model|the provider's content filter withheld the reply (finish_reason content_filter)");

  reset(() => [200, { choices: [{ index: 0, message: { role: 'assistant', content: 'partial an' }, finish_reason: 'content_filter' }] }]);
  outcome = await engine.run('# T\n\n## Main\n\n```lua\nmessages:user("x")\nreturn models.loop() .. "|" .. sys.reply_finish_reason\n```\n', { models: { default: model } });
  assert.equal(outcome.result, 'partial an|content_filter');

  reset(ok([{ type: 'thinking', thinking: [{ type: 'text', text: 'hmm' }] }, { type: 'text', text: 'Hello ' }, { type: 'text', text: 'world' }]));
  assert.equal((await engine.run(INFER, { models: { default: model } })).result, 'Hello world');
});

test('reasoning_content goes back with the assistant tool-call turn in the next round', async () => {
  reset(() => toolCall('grab', '{}', { reasoning_content: 'I should grab.' }), echoTool);
  const outcome = await engine.run(GRAB, { models: { default: openAIChatModel({ baseURL, model: 'thinker' }) } });
  assert.equal(outcome.result, 'tool: grabbed {}');
  assert.equal(requests[1].body.messages[1].reasoning_content, 'I should grab.');
  assert.equal(requests[1].body.messages[0].reasoning_content, undefined);
});

test('model options from the role spec pass through by name; an api-version query string is kept', async () => {
  reset(() => toolCall('grab', '{}'), echoTool);
  const front = '---\nmodels:\n  writer:\n    model: tuned\n    description: writes\n    context: 128000\n    seed: 7\n    top_p: 0.5\n    stop: ["END"]\n    tool_choice: grab\n    parallel_tool_calls: false\n    response_format: { type: json_object }\n    reasoning_effort: low\n    max_completion_tokens: 300\n    params: { top_k: 3, custom_flag: true, stream: true, model: not-this }\n---\n';
  const model = openAIChatModel({ baseURL: `${baseURL}/?api-version=2024-10-21`, model: 'small', params: { user: 'host-default', seed: 1 } });
  const outcome = await engine.run(front + GRAB.slice(GRAB.indexOf('#')), { models: { writer: model } });
  assert.equal(outcome.result, 'tool: grabbed {}');
  assert.equal(requests[0].url, '/v1/chat/completions?api-version=2024-10-21');
  const { messages, tools, ...rest } = requests[0].body;
  assert.deepEqual(rest, {
    model: 'tuned', seed: 7, top_p: 0.5, stop: ['END'], tool_choice: { type: 'function', function: { name: 'grab' } },
    parallel_tool_calls: false, response_format: { type: 'json_object' }, reasoning_effort: 'low', max_completion_tokens: 300,
    top_k: 3, custom_flag: true, user: 'host-default',
  });
  reset(ok('plain'));
  await engine.run(front + INFER.slice(INFER.indexOf('#')), { models: { writer: model } });
  assert.equal(requests[0].body.tool_choice, undefined, 'no tool_choice without tools');
  assert.equal(requests[0].body.parallel_tool_calls, undefined);
});

test('a 200 with an error body is a Model error with the provider message', async () => {
  reset(() => [200, { error: { message: 'No endpoints found for this model', code: 404 } }]);
  const outcome = await engine.run(INFER, { models: { default: openAIChatModel({ baseURL, model: 'small' }) } });
  assert.deepEqual(outcome.error, { kind: 'Model', message: 'the model provider answered with an error: No endpoints found for this model', section: '## Main', line: 6 });
  reset(() => [200, { error: { message: 'upstream overloaded', code: 502 } }], ok('second try'));
  const retried = await engine.run(INFER, { models: { default: openAIChatModel({ baseURL, model: 'small', retryDelayMs: 1 }) } });
  assert.equal(retried.result, 'second try');
});

test('usage: in the reply, a model_usage event per call, and per-role totals in the outcome', async () => {
  const usage = (p, c, cached, reasoning) => ({ usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c, prompt_tokens_details: { cached_tokens: cached }, completion_tokens_details: { reasoning_tokens: reasoning } } });
  reset(
    () => [200, { ...toolCall('grab', '{}')[1], ...usage(100, 10, 40, 5) }],
    () => [200, { ...echoTool({ messages: [{ content: 'x' }] })[1], ...usage(120, 20, 100, 0) }],
    ok('inferred', usage(7, 3, 0, 1)),
  );
  const src = '# T\n\n## Main\n\n```lua\ntools.offer_local("grab", "Grab", {}, function() return "g" end)\nmessages:user("go")\nlocal a = models.loop()\nreturn a .. "|" .. models.infer("more")\n```\n';
  const events = [];
  const replies = [];
  const inner = openAIChatModel({ baseURL, model: 'small' });
  const model = async (request) => { const r = await inner(request); replies.push(r); return r; };
  const outcome = await engine.run(src, { models: { default: model }, onEvent: (e) => events.push(e) });
  assert.equal(outcome.result, 'tool: x|inferred');
  assert.deepEqual(replies[0].usage, { input_tokens: 100, output_tokens: 10, cached_tokens: 40, reasoning_tokens: 5 });
  const used = events.filter((e) => e.event === 'model_usage');
  assert.deepEqual(used.map((e) => [e.turn, e.usage.input_tokens]), [[1, 100], [2, 120], [1, 7]]);
  assert.equal(events.indexOf(used[0]) + 1, events.findIndex((e) => e.event === 'model_turn_completed'), 'model_usage comes just before the round completes');
  assert.deepEqual(outcome.usage, { default: { calls: 3, input_tokens: 227, output_tokens: 33, cached_tokens: 140, reasoning_tokens: 6 } });
  reset(ok('no usage'));
  assert.equal((await engine.run(INFER, { models: { default: openAIChatModel({ baseURL, model: 'small' }) } })).usage, undefined);
});

test('tool wire names over 64 characters are shortened deterministically and mapped back', async () => {
  const pack = {
    name: 'a-rather-long-pack-name-for-testing-wire-names',
    description: 'Long names.',
    tools: [{ name: 'look_up_everything_about_something', description: 'Look up.', parameters: { type: 'object', properties: {} }, trust: 'trusted', call: async () => 'looked up' }],
  };
  const src = `---\nuses: [${pack.name}]\n---\n# T\n\n## Main\n\n\`\`\`lua\ntools.offer("${pack.name}/look_up_everything_about_something")\nmessages:user("go")\nreturn models.loop() .. "|" .. messages[2].tool_calls[1].name\n\`\`\`\n`;
  let wire;
  reset((body) => {
    wire = body.tools[0].function.name;
    return toolCall(wire, '{}');
  }, echoTool);
  const model = openAIChatModel({ baseURL, model: 'small' });
  const outcome = await engine.run(src, { models: { default: model }, packs: [pack] });
  const full = 'a-rather-long-pack-name-for-testing-wire-names_look_up_everything_about_something';
  assert.equal(outcome.result, `tool: looked up|${full}`);
  assert.ok(wire.length <= 64 && /^[A-Za-z0-9_-]+$/.test(wire), wire);
  assert.ok(wire.startsWith('a-rather-long-pack-name'));
  assert.equal(requests[1].body.messages[1].tool_calls[0].function.name, wire, 'the history uses the wire name too');
  assert.equal(requests[1].body.tools[0].function.name, wire, 'the same name in every round');
  // tool_choice may name the tool by its id.
  reset((body) => toolCall(body.tools[0].function.name, '{}'), echoTool);
  const chosen = src.replace('---\n', `---\nmodels:\n  default: { tool_choice: ${pack.name}/look_up_everything_about_something }\n`);
  assert.equal((await engine.run(chosen, { models: { default: model }, packs: [pack] })).ok, true);
  assert.deepEqual(requests[0].body.tool_choice, { type: 'function', function: { name: wire } });
});

test('a call to a tool that was not offered: the adapter tells the model and asks again; once out of repairs the engine refuses it (002)', async () => {
  const used = (p, c) => ({ usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } });
  const rogue = () => [200, { ...toolCall('rogue', '{}')[1], ...used(5, 2) }];
  reset(rogue, (body) => {
    const told = body.messages.at(-1);
    assert.equal(told.role, 'tool');
    assert.equal(told.tool_call_id, 'call_a');
    assert.equal(told.content, 'error: there is no tool named "rogue"; the tools offered are ["grab"]');
    assert.equal(body.messages.at(-2).tool_calls[0].function.name, 'rogue');
    return [200, { ...toolCall('grab', '{}')[1], ...used(11, 3) }];
  }, (body) => [200, { ...echoTool(body)[1], ...used(20, 4) }]);
  const events = [];
  const outcome = await engine.run(GRAB, { models: { default: openAIChatModel({ baseURL, model: 'small' }) }, onEvent: (e) => events.push(e) });
  assert.equal(outcome.result, 'tool: grabbed {}');
  assert.equal(requests.length, 3);
  assert.equal(requests[2].body.messages.length, 3, 'the repaired exchange stays inside its round');
  assert.deepEqual(events.filter((e) => e.event === 'model_unknown_tool').map((e) => e.names), [['rogue']]);
  assert.deepEqual(events.filter((e) => e.event === 'model_usage').map((e) => e.usage), [
    { input_tokens: 16, output_tokens: 5 }, { input_tokens: 20, output_tokens: 4 },
  ], 'the repaired round reports what both of its provider calls used');
  assert.deepEqual(outcome.usage, { default: { calls: 2, input_tokens: 36, output_tokens: 9, cached_tokens: 0, reasoning_tokens: 0 } });

  reset(rogue, rogue);
  const refused = await engine.run(GRAB, { models: { default: openAIChatModel({ baseURL, model: 'small' }) } });
  assert.equal(requests.length, 2);
  assert.equal(refused.error.kind, 'Tool');
  assert.match(refused.error.message, /tool "rogue" is not in this section's scope; in-scope aliases: \["grab"\]/);
  reset(rogue);
  const strict = await engine.run(GRAB, { models: { default: openAIChatModel({ baseURL, model: 'small', unknownToolRetries: 0 }) } });
  assert.equal(strict.error.kind, 'Tool');
  assert.equal(requests.length, 1);
});

test('provider shapes: x-should-retry, a retry-after date, tool calls without ids or with object arguments, cached tokens by another name, thinking parts, extra headers', async () => {
  const model = openAIChatModel({ baseURL, model: 'small', retryDelayMs: 1, headers: { 'api-key': 'k' } });
  reset(fail(500, { error: { message: 'do not retry' } }, { 'x-should-retry': 'false' }), ok('never'));
  assert.equal((await engine.run(INFER, { models: { default: model } })).error.message, 'the model provider answered 500: do not retry');
  assert.equal(requests.length, 1);
  reset(fail(400, { error: { message: 'retry me' } }, { 'x-should-retry': 'true' }), ok('retried'));
  assert.equal((await engine.run(INFER, { models: { default: model } })).result, 'retried');
  assert.equal(requests[1].apiKey, 'k', 'extra headers are sent (Azure-style api-key)');
  reset(fail(503, { error: { message: 'later' } }, { 'retry-after': new Date(Date.now() + 1500).toUTCString() }), ok('dated'));
  assert.equal((await engine.run(INFER, { models: { default: model } })).result, 'dated');
  assert.ok(requests[1].at - requests[0].at >= 400, 'an HTTP-date retry-after is honoured');

  reset(() => [200, { choices: [{ index: 0, message: { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'grab', arguments: { k: 1 } } }] }, finish_reason: 'stop' }], usage: { prompt_tokens: 9, completion_tokens: 1, prompt_cache_hit_tokens: 4 } }], echoTool);
  const replies = [];
  const outcome = await engine.run(GRAB, { models: { default: async (r) => { const x = await model(r); replies.push(x); return x; } } });
  assert.equal(outcome.result, 'tool: grabbed {"k":1}');
  assert.deepEqual(replies[0].tool_calls, [{ id: 'call_1_0', name: 'grab', arguments: { k: 1 } }]);
  assert.equal(replies[0].finish_reason, 'tool_calls');
  assert.deepEqual(replies[0].usage, { input_tokens: 9, output_tokens: 1, cached_tokens: 4 });
  assert.equal(requests[1].body.messages[2].tool_call_id, 'call_1_0');

  reset(ok([{ type: 'thinking', thinking: [{ type: 'text', text: 'pondering' }] }, { type: 'text', text: 'answer' }]));
  const direct = await model({ role: 'default', spec: {}, messages: [{ role: 'user', content: 'q' }], turn: 1 });
  assert.deepEqual({ content: direct.content, reasoning: direct.reasoning_content }, { content: 'answer', reasoning: 'pondering' });
});
