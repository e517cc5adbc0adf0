// openAIChatModel against a local HTTP server that speaks the chat-completions protocol (never a
// real provider): plain replies, tool calls through models.loop, a provider error, the CLI.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createEngine, openAIChatModel } from '../pkg/index.js';
import { PKG } from './helpers.mjs';

const requests = [];
let server;
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
  server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c) => { text += c; });
    req.on('end', () => {
      const body = JSON.parse(text);
      requests.push({ url: req.url, auth: req.headers.authorization, body });
      const [status, payload] = req.url === '/v1/chat/completions' ? answer(body) : [404, { error: { message: 'no such route' } }];
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${server.address().port}/v1`;
});

after(() => new Promise((resolve) => server.close(resolve)));

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
  const model = openAIChatModel({ baseURL, model: 'broken' });
  const outcome = await engine.run('# T\n\n## Main\n\n```lua\nreturn models.infer("hello")\n```\n', { models: { default: model } });
  assert.deepEqual(outcome.error, { kind: 'Model', message: 'the model provider answered 500: the model is overloaded', section: '## Main' });
  const caught = await engine.run('# T\n\n## Main\n\n```lua\nlocal ok, e = pcall(models.infer, "hello")\nreturn e.kind .. "|" .. e.message\n```\n', { models: { default: model } });
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
