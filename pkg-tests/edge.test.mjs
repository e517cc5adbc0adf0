// examples/edge: its app runs the prompt per request, its model an OpenAI-compatible server (here a
// local one speaking the protocol) and its tool a Pack it serves, and streams the run's events as
// Server-Sent Events. As a Worker in workerd (runvil/workerd), and as a server in Deno and in Bun
// (the default entry), all on 127.0.0.1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, PKG, freePort, localProvider, startServer, serveWorkerd, tempDir, writeWorkerdConfig } from './helpers.mjs';

const EXAMPLE = join(ROOT, 'examples/edge');
const FACT = 'workerd is the open-source runtime behind Cloudflare Workers.';
const BIN = join(ROOT, 'node_modules/.bin');

/**
 * The model: it calls the offered tool, then answers with what the tool said. Its second answer
 * waits until the client has read the tool's result from the stream (`release()`), so a buffered
 * response would never complete.
 */
async function startProvider(t) {
  const state = { requests: [], streamed: null, release: null };
  const provider = await localProvider(async (body, req, res) => {
    state.requests.push({ body, authorization: req.headers.authorization });
    const last = body.messages.at(-1);
    let message;
    if (last.role === 'tool') {
      await state.streamed;
      message = { role: 'assistant', content: `Answer: ${last.content}` };
    } else {
      message = { role: 'assistant', content: null, tool_calls: [{ id: `call_${state.requests.length}`, type: 'function', function: { name: body.tools[0].function.name, arguments: '{"topic":"workerd"}' } }] };
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
      id: 'x', object: 'chat.completion', model: body.model,
      choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }],
    }));
  });
  t.after(provider.close);
  return { baseURL: provider.baseURL, state };
}

/** Starts a server until the test ends; resolves with its log once `url` answers (404 at `/`). */
async function serveAt(t, command, args, url, options = {}) {
  const { value: probe, log } = await startServer(t, command, args, () => fetch(`${url}/`), options);
  assert.equal(probe.status, 404, log());
  return log;
}

/** Reads a text/event-stream body, calling `onEvent({ event, data })` as each event arrives. */
async function readSSE(response, onEvent) {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      onEvent({ event: /^event: (.*)$/m.exec(block)?.[1], data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1]) });
    }
  }
  assert.equal(buffer, '', 'the stream ends on an event boundary');
}

/** Two requests in a row (one engine serves both), each a live event stream ending in the outcome. */
async function checkRuns(base, provider, log) {
  for (const round of [1, 2]) {
    provider.state.streamed = new Promise((resolve) => { provider.state.release = resolve; });
    const response = await fetch(`${base}/run?q=${encodeURIComponent('What is workerd?')}`);
    assert.equal(response.status, 200, log());
    assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const events = [];
    await readSSE(response, (e) => {
      events.push(e);
      if (e.event === 'tool_result') provider.state.release();
    });
    const names = events.map((e) => e.event);
    assert.equal(names[0], 'run_started', `round ${round}`);
    assert.deepEqual(names.slice(-2), ['run_finished', 'outcome']);
    for (const name of ['model_turn_started', 'assistant_tool_calls', 'tool_call_succeeded', 'tool_result']) assert.ok(names.includes(name), `${name} in ${names}`);
    assert.ok(events.every((e) => e.event === 'outcome' || e.data.event === e.event), 'each event is named by its own name');
    const toolResult = events.find((e) => e.event === 'tool_result').data;
    assert.deepEqual({ tool: toolResult.tool, content: toolResult.content }, { tool: 'facts/lookup', content: FACT });
    const outcome = events.at(-1).data;
    assert.deepEqual({ ok: outcome.ok, result: outcome.result }, { ok: true, result: `Answer: ${FACT}` }, JSON.stringify(outcome));
  }
  const { requests } = provider.state;
  assert.equal(requests.length, 4);
  assert.equal(requests[0].authorization, 'Bearer test-key');
  assert.equal(requests[0].body.model, 'edge-model');
  assert.match(requests[0].body.messages.at(-1).content, /What is workerd\?$/);
}


test('examples/edge as a Worker in workerd: a prompt per request, its model and tool, events streamed as SSE', { timeout: 120_000 }, async (t) => {
  const provider = await startProvider(t);
  const dir = tempDir(t, 'edge');
  const config = writeWorkerdConfig(dir, {
    modules: Object.fromEntries(['worker.js', 'app.js', 'prompt.js'].map((file) => [file, join(EXAMPLE, file)])),
    text: { OPENAI_BASE_URL: provider.baseURL, OPENAI_API_KEY: 'test-key', MODEL: 'edge-model' },
    network: true,
  });
  const server = await serveWorkerd(t, config);
  assert.equal((await fetch(`${server.url}/`)).status, 404, server.log());
  await checkRuns(server.url, provider, server.log);
});

/** The example beside a node_modules/runvil holding the package, as a Deno or Bun project has it. */
function serverProject(t) {
  const dir = tempDir(t, 'edge');
  for (const file of ['server.js', 'app.js', 'prompt.js']) cpSync(join(EXAMPLE, file), join(dir, file));
  mkdirSync(join(dir, 'node_modules'));
  cpSync(PKG, join(dir, 'node_modules/runvil'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module', dependencies: { runvil: '*' } }));
  return dir;
}

function serverEnv(provider, port) {
  return { ...process.env, OPENAI_BASE_URL: provider.baseURL, OPENAI_API_KEY: 'test-key', MODEL: 'edge-model', PORT: String(port), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
}

test('examples/edge served by Deno (deno serve, the default entry)', { timeout: 120_000 }, async (t) => {
  const provider = await startProvider(t);
  const dir = serverProject(t);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const log = await serveAt(t, join(BIN, 'deno'), ['serve', '--no-lock', '--node-modules-dir=manual', '--allow-net', '--allow-env', '--host', '127.0.0.1', '--port', String(port), 'server.js'], base,
    { cwd: dir, env: { ...serverEnv(provider, port), DENO_DIR: join(dir, '.deno') } });
  await checkRuns(base, provider, log);
});

test('examples/edge served by Bun (its default export, the default entry)', { timeout: 120_000 }, async (t) => {
  const oven = join(ROOT, 'node_modules/@oven');
  const bun = (existsSync(oven) ? readdirSync(oven) : []).filter((d) => d.startsWith(`bun-${process.platform}-${process.arch}`))
    .map((d) => join(oven, d, 'bin/bun')).find(existsSync);
  assert.ok(bun, `no bun binary under ${oven} (npm dev dependency bun)`);
  const provider = await startProvider(t);
  const dir = serverProject(t);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const log = await serveAt(t, bun, ['server.js'], base, { cwd: dir, env: serverEnv(provider, port) });
  await checkRuns(base, provider, log);
});
