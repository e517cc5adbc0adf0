// examples/edge: the Worker runs its prompt per request through runvil/workerd, its model an
// OpenAI-compatible server (here a local one speaking the protocol), and streams the run's events
// as Server-Sent Events. Served by workerd on 127.0.0.1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ROOT, PKG, localProvider } from './helpers.mjs';

const EXAMPLE = join(ROOT, 'examples/edge');
const FACT = 'workerd is the open-source runtime behind Cloudflare Workers.';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A workerd config serving the example: the package's files as modules named runvil/<file>. */
function workerdConfig(dir, baseURL) {
  const rel = (file) => relative(dir, file);
  const pkgModules = readdirSync(PKG).filter((f) => f.endsWith('.js') || f.endsWith('.wasm')).map((file) => {
    const name = file === 'workerd.js' ? 'runvil/workerd' : `runvil/${file}`;
    return file.endsWith('.wasm') ? `(name = "${name}", wasm = embed "${rel(join(PKG, file))}")` : `(name = "${name}", esModule = embed "${rel(join(PKG, file))}")`;
  });
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .edge),
    # The model server is on this machine: let the Worker's fetch reach local addresses.
    (name = "net", network = (allow = ["public", "local", "private"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const edge :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "${rel(join(EXAMPLE, 'worker.js'))}"),
    (name = "prompt.md", text = embed "${rel(join(EXAMPLE, 'prompt.md'))}"),
    ${pkgModules.join(',\n    ')},
  ],
  bindings = [
    (name = "OPENAI_BASE_URL", text = "${baseURL}"),
    (name = "OPENAI_API_KEY", text = "test-key"),
    (name = "MODEL", text = "edge-model"),
  ],
  globalOutbound = "net",
  compatibilityDate = "2025-01-01",
);
`;
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
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      onEvent({ event, data: JSON.parse(data) });
    }
  }
  assert.equal(buffer, '', 'the stream ends on an event boundary');
}

test('examples/edge in workerd: a prompt per request, its model and tool, events streamed as SSE', { timeout: 120_000 }, async (t) => {
  // The provider calls the offered tool, then answers with what the tool said. Its second answer
  // waits until the client has seen the tool's result on the stream: a buffered response would
  // never get there.
  let sawToolResult;
  const streamed = new Promise((resolve) => { sawToolResult = resolve; });
  const requests = [];
  const provider = await localProvider(async (body, req, res) => {
    requests.push({ body, authorization: req.headers.authorization });
    const last = body.messages.at(-1);
    let message;
    if (last.role === 'tool') {
      await streamed;
      message = { role: 'assistant', content: `Answer: ${last.content}` };
    } else {
      message = { role: 'assistant', content: null, tool_calls: [{ id: `call_${requests.length}`, type: 'function', function: { name: body.tools[0].function.name, arguments: '{"topic":"workerd"}' } }] };
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
      id: 'x', object: 'chat.completion', model: body.model,
      choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }],
    }));
  });
  t.after(provider.close);

  const dir = mkdtempSync(join(tmpdir(), 'runvil-edge-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'edge.capnp');
  writeFileSync(config, workerdConfig(dir, provider.baseURL));

  const port = await freePort();
  const child = spawn(join(ROOT, 'node_modules/.bin/workerd'), ['serve', config, '--socket-addr', `http=127.0.0.1:${port}`],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let log = '';
  child.stdout.on('data', (d) => { log += d; });
  child.stderr.on('data', (d) => { log += d; });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { child.kill('SIGKILL'); }
    }
    await exited;
  });
  const base = `http://127.0.0.1:${port}`;
  let probe;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline && !probe;) {
    if (child.exitCode !== null) assert.fail(`workerd exited with ${child.exitCode}:\n${log}`);
    probe = await fetch(`${base}/`).catch(() => new Promise((resolve) => setTimeout(resolve, 200)));
  }
  assert.ok(probe, `workerd did not answer:\n${log}`);
  assert.equal(probe.status, 404);

  for (const round of [1, 2]) { // one engine per isolate serves request after request
    const response = await fetch(`${base}/run?q=${encodeURIComponent('What is workerd?')}`);
    assert.equal(response.status, 200, log);
    assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const events = [];
    await readSSE(response, (e) => {
      events.push(e);
      if (e.event === 'tool_result') sawToolResult();
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
  assert.equal(requests.length, 4);
  assert.equal(requests[0].authorization, 'Bearer test-key');
  assert.equal(requests[0].body.model, 'edge-model');
  assert.match(requests[0].body.messages.at(-1).content, /What is workerd\?$/);
});
