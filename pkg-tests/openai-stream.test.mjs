// openAIChatModel with `stream: true` against a local server speaking chat-completions
// Server-Sent Events: text and reasoning deltas reach the run's events as `model_delta`, the
// result is what the whole reply would give, tool calls assembled from their pieces, usage from the
// last chunk; a stream that breaks off after its text was reported is a Model error, not retried.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { localProvider } from './helpers.mjs';
import { createEngine, openAIChatModel } from '../pkg/index.js';

const requests = [];
/** What the next requests get: (body, res) => void, first first. */
const script = [];
let provider;
let baseURL;

before(async () => {
  provider = await localProvider((body, _req, res) => {
    requests.push(body);
    script.shift()(body, res);
  });
  baseURL = provider.baseURL;
});
after(() => provider.close());

const engine = await createEngine();
const chunk = (delta, extra = {}) => ({ id: 's', object: 'chat.completion.chunk', model: 'm-stream', choices: [{ index: 0, delta, finish_reason: null }], ...extra });
/** Writes the events, some split across writes, then [DONE]. */
function sse(events, { breakAfter } = {}) {
  return (body, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const text = events.map((e) => `data: ${JSON.stringify(e)}\n\n`);
    let i = 0;
    const next = () => {
      if (breakAfter !== undefined && i === breakAfter) return res.socket.destroy();
      if (i === text.length) return res.end('data: [DONE]\n\n');
      const t = text[i++];
      const cut = Math.floor(t.length / 2);
      res.write(t.slice(0, cut));
      setTimeout(() => { res.write(t.slice(cut)); setTimeout(next, 2); }, 2);
    };
    next();
  };
}
const finish = (reason) => ({ id: "s", model: "m-stream", choices: [{ index: 0, delta: {}, finish_reason: reason }] });
const usageChunk = { id: 's', model: 'm-stream', choices: [], usage: { prompt_tokens: 12, completion_tokens: 5, completion_tokens_details: { reasoning_tokens: 2 } } };

test('a streamed tool loop: deltas as model_delta events, tool calls from pieces, the same result, usage', async () => {
  requests.length = 0;
  script.push(
    sse([
      chunk({ role: 'assistant', reasoning_content: 'I will ' }),
      chunk({ reasoning_content: 'grab.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_s', type: 'function', function: { name: 'grab', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"value":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }),
      finish('tool_calls'),
      usageChunk,
    ]),
    sse([chunk({ role: 'assistant', content: 'Hel' }), chunk({ content: 'lo, ' }), chunk({ content: 'world' }), finish('stop'), usageChunk]),
  );
  const events = [];
  const src = '# T\n\n## Main\n\n```lua\ntools.offer_local("grab", "Grab", { value = "string" }, function(args) return "got " .. args.value end)\nmessages:user("go")\nreturn models.loop() .. "|" .. sys.model .. "|" .. messages[3].content\n```\n';
  const outcome = await engine.run(src, { models: { default: openAIChatModel({ baseURL, model: 'small', stream: true }) }, onEvent: (e) => events.push(e) });
  assert.equal(outcome.result, 'Hello, world|m-stream|got x');
  assert.equal(requests[0].stream, true);
  assert.deepEqual(requests[0].stream_options, { include_usage: true });
  assert.equal(requests[1].messages[1].reasoning_content, 'I will grab.');
  assert.deepEqual(requests[1].messages[1].tool_calls, [{ id: 'call_s', type: 'function', function: { name: 'grab', arguments: '{"value":"x"}' } }]);
  const deltas = events.filter((e) => e.event === 'model_delta');
  assert.deepEqual(deltas.map((e) => [e.turn, e.text ?? null, e.reasoning ?? null]), [
    [1, null, 'I will '], [1, null, 'grab.'], [2, 'Hel', null], [2, 'lo, ', null], [2, 'world', null],
  ]);
  assert.equal(deltas[0].section, 'Main');
  const completed = events.findIndex((e) => e.event === 'model_turn_completed');
  assert.ok(events.indexOf(deltas[1]) < completed, 'deltas come before their round completes');
  assert.deepEqual(outcome.usage, { default: { calls: 2, input_tokens: 24, output_tokens: 10, cached_tokens: 0, reasoning_tokens: 4 } });
});

test('a stream that breaks off after text was reported fails with a Model error and is not retried; before any text it is', async () => {
  requests.length = 0;
  script.push(sse([chunk({ content: 'partial' }), chunk({ content: ' more' })], { breakAfter: 1 }));
  const model = openAIChatModel({ baseURL, model: 'small', stream: true, retryDelayMs: 1 });
  const INFER = '# T\n\n## Main\n\n```lua\nreturn models.infer("hello")\n```\n';
  const outcome = await engine.run(INFER, { models: { default: model } });
  assert.equal(outcome.error.kind, 'Model');
  assert.match(outcome.error.message, /^the model provider's stream broke off/);
  assert.equal(requests.length, 1);

  requests.length = 0;
  script.push(sse([chunk({ content: 'never' })], { breakAfter: 0 }), sse([chunk({ content: 'second' }), finish('stop')]));
  assert.equal((await engine.run(INFER, { models: { default: model } })).result, 'second');
  assert.equal(requests.length, 2);

  requests.length = 0;
  script.push(sse([{ error: { message: 'overloaded mid-stream', code: 502 } }]), sse([chunk({ content: 'ok' })]));
  assert.equal((await engine.run(INFER, { models: { default: model } })).result, 'ok');
  script.push(sse([chunk({ content: 'half' }), { error: { message: 'upstream died' } }]));
  const died = await engine.run(INFER, { models: { default: model } });
  assert.match(died.error.message, /stream broke off \(the provider reported an error: upstream died\)/);
});

test('a server that answers JSON to a stream request is read as JSON', async () => {
  script.push((body, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'whole' }, finish_reason: 'stop' }] }));
  });
  const outcome = await engine.run('# T\n\n## Main\n\n```lua\nreturn models.infer("x")\n```\n', { models: { default: openAIChatModel({ baseURL, model: 'small', stream: true }) } });
  assert.equal(outcome.result, 'whole');
});

test('a stream that stalls after its text was reported is a Model error, not retried (the deltas cannot be taken back)', async () => {
  requests.length = 0;
  script.push((body, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify(chunk({ content: 'stalls' }))}\n\n`); // and then nothing
  }, sse([chunk({ content: 'never' })]));
  const outcome = await engine.run('# T\n\n## Main\n\n```lua\nreturn models.infer("x")\n```\n', { models: { default: openAIChatModel({ baseURL, model: 'small', stream: true, timeoutMs: 150, retryDelayMs: 1 }) } });
  assert.deepEqual(outcome.error, { kind: 'Model', message: "the model provider's stream broke off (the model provider did not answer within 150 ms)", section: '## Main', line: 6 });
  assert.equal(requests.length, 1);
  script.length = 0;
});
