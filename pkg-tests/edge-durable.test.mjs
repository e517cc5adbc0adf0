// examples/edge/durable-worker.js run as its wrangler-durable.toml deploys it, in workerd: its
// RunObject owns each run (the model from the Worker's env, here a local chat-completions server),
// a client starts a run, attaches to its events and outcome, and cancels one; a run whose workerd
// was SIGKILLed during a model call resumes when a client next attaches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ROOT, fetchJson, localProvider, serveWorkerd, tempDir, writeWorkerdConfig } from './helpers.mjs';

const PROMPT = `# Durable

## Main

\`\`\`lua
local first = models.infer('first ' .. args)
local second = models.infer('second')
store.write('answers.txt', first .. '\\n' .. second)
return first .. ' / ' .. second
\`\`\`
`;

/** The model: `echo:` and the request's last message; call number `holdAt` is never answered. */
async function provider(t) {
  const state = { requests: [], holdAt: 0, onHold: () => {} };
  const server = await localProvider((body, req, res) => {
    state.requests.push({ body, authorization: req.headers.authorization });
    if (state.requests.length === state.holdAt) return void state.onHold();
    const message = { role: 'assistant', content: `echo:${body.messages.at(-1).content}` };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ choices: [{ index: 0, message, finish_reason: 'stop' }] }));
  });
  t.after(server.close);
  return { ...server, state };
}

/** The example's bindings, as wrangler-durable.toml has them (the key a secret there). */
function writeConfig(dir, baseURL) {
  return writeWorkerdConfig(dir, {
    modules: { 'durable-worker.js': join(ROOT, 'examples/edge/durable-worker.js') },
    durableObjects: { RUNS: 'RunObject', RUNVIL_STORE: 'RunvilStoreObject' },
    text: { OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: 'test-key', MODEL: 'edge-model' },
    network: true,
  });
}

const start = (server, args) => fetchJson(server, `/runs?args=${encodeURIComponent(args)}`, { method: 'POST', body: PROMPT });

/** GET /runs/<id>: the run's events, then its outcome, one JSON object a line. */
async function attach(server, id) {
  const response = await fetch(`${server.url}/runs/${id}`);
  assert.equal(response.status, 200, server.log());
  const lines = (await response.text()).split('\n').filter(Boolean).map((line) => JSON.parse(line));
  assert.ok('outcome' in lines.at(-1), `the last line is the outcome\n${server.log()}`);
  assert.ok(lines.slice(0, -1).every((line) => 'event' in line));
  return { events: lines.slice(0, -1).map((line) => line.event.event), outcome: lines.at(-1).outcome };
}

test('examples/edge/durable-worker.js: a run started, attached to, and its outcome; cancel; other paths 404', { timeout: 120_000 }, async (t) => {
  const model = await provider(t);
  const server = await serveWorkerd(t, writeConfig(tempDir(t, 'edge-durable'), model.baseURL));
  const started = await start(server, 'rivers');
  assert.match(started.id, /^[0-9a-f-]{36}$/);
  assert.equal(started.status, 'running');
  const { events, outcome } = await attach(server, started.id);
  assert.deepEqual([outcome.ok, outcome.result], [true, 'echo:first rivers / echo:second'], JSON.stringify(outcome));
  assert.equal(events[0], 'run_started');
  assert.equal(events.at(-1), 'run_finished');
  assert.equal(model.state.requests.length, 2);
  assert.deepEqual(model.state.requests.map((r) => [r.authorization, r.body.model]), [['Bearer test-key', 'edge-model'], ['Bearer test-key', 'edge-model']]);
  // Cancelling an ended run answers it as it ended; attaching again replays it without a call.
  const ended = await fetchJson(server, `/runs/${started.id}/cancel`, { method: 'POST' });
  assert.deepEqual([ended.status, ended.outcome.result], ['ended', outcome.result]);
  assert.deepEqual((await attach(server, started.id)).outcome.result, outcome.result);
  assert.equal(model.state.requests.length, 2);

  model.state.holdAt = 3;
  const held = new Promise((resolve) => { model.state.onHold = resolve; });
  const second = await start(server, 'lakes');
  await held;
  const cancelled = await fetchJson(server, `/runs/${second.id}/cancel`, { method: 'POST' });
  assert.equal(cancelled.status, 'ended');
  assert.equal(cancelled.outcome.error.kind, 'Cancelled', JSON.stringify(cancelled.outcome));
  assert.equal((await attach(server, second.id)).outcome.error.kind, 'Cancelled');

  for (const path of ['/', '/run', '/elsewhere/x']) assert.equal((await fetch(`${server.url}${path}`)).status, 404, path);
});

test('examples/edge/durable-worker.js: workerd SIGKILLed during a model call, the next attach resumes the run', { timeout: 120_000 }, async (t) => {
  const model = await provider(t);
  const config = writeConfig(tempDir(t, 'edge-durable'), model.baseURL);
  let server = await serveWorkerd(t, config);
  model.state.holdAt = 2; // the second call: the first answer is in the journal
  const held = new Promise((resolve) => { model.state.onHold = resolve; });
  const { id } = await start(server, 'rivers');
  await held;
  await server.kill();
  model.state.holdAt = 0;
  server = await serveWorkerd(t, config);
  const { outcome } = await attach(server, id);
  assert.deepEqual([outcome.ok, outcome.result], [true, 'echo:first rivers / echo:second'], JSON.stringify(outcome));
  // The answered call is not made again; the one in flight at the kill is.
  assert.deepEqual(model.state.requests.map((r) => r.body.messages.at(-1).content), ['first rivers', 'second', 'second']);
});
