// RunvilRunObject in workerd from npm (docs/durable.md): a Durable Object owns a run, journals it
// in its storage and keeps its workspace in RunvilStoreObject. workerd is SIGKILLed mid-run at
// seeded points — while a model call is held by the local provider (a call in flight), and just
// after a reply went out (before its entry could be stored); the next request resumes the run,
// which ends with the uninterrupted run's result and files, having made its model calls plus at
// most the ones in flight. A client attaches by id (NDJSON events and outcome) and can cancel.
// The Worker is pkg-tests/durable/run-worker.js. RUNVIL_KILL_SEED picks the kill points.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, fetchJson, localProvider, mulberry32, serveWorkerd, writeWorkerdConfig } from './helpers.mjs';
import { ARGS, MODEL_CALLS, PROMPT, RESULT, WRITTEN, chatChoice } from './durable/fixture.mjs';

const WORKER = join(ROOT, 'pkg-tests/durable/run-worker.js');
const SEED = Number(process.env.RUNVIL_KILL_SEED ?? 20261205);

/**
 * The provider: answers as the fixture's model (a tool call on the loop's first round), counts
 * calls, and can hold call number `holdAt` (never answered) or report when it answered call number
 * `reportAt`.
 */
async function provider(t) {
  const state = { calls: 0, holdAt: 0, reportAt: 0, onHold: () => {}, onReport: () => {} };
  const server = await localProvider((body, req, res) => {
    const n = ++state.calls;
    if (n === state.holdAt) {
      state.onHold();
      return; // in flight until workerd dies
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ choices: [chatChoice(body)] }));
    if (n === state.reportAt) state.onReport();
  });
  t.after(() => server.close());
  return { ...server, state };
}

function writeConfig(dir, modelURL) {
  writeWorkerdConfig(dir, {
    name: 'run',
    modules: { 'worker.js': WORKER, 'fixture.mjs': join(ROOT, 'pkg-tests/durable/fixture.mjs') },
    durableObjects: { RUNS: 'TestRunObject', RUNVIL_STORE: 'RunvilStoreObject' },
    text: { MODEL_URL: modelURL },
    network: true,
  });
}

/** Attaches to run `id`: its events and outcome. */
async function attach(server, id) {
  const response = await fetch(`${server.url}/runs/${id}`);
  assert.equal(response.status, 200, server.log());
  const items = (await response.text()).split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { events: items.filter((i) => i.event).map((i) => i.event), outcome: items.find((i) => 'outcome' in i)?.outcome };
}

const start = (server, id, args = ARGS) => fetchJson(server, `/runs?id=${id}&args=${args}`, { method: 'POST', body: PROMPT });

test('a run owned by a Durable Object: start, attach, outcome, files; the same start again is the same run', { timeout: 120_000 }, async (t) => {
  const model = await provider(t);
  const dir = mkdtempSync(join(tmpdir(), 'runvil-run-object-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeConfig(dir, model.baseURL);
  const server = await serveWorkerd(t, join(dir, 'run.capnp'));
  const started = await start(server, 'r1');
  assert.equal(started.status, 'running');
  const { events, outcome } = await attach(server, 'r1');
  assert.equal(outcome.ok, true, JSON.stringify(outcome));
  assert.equal(outcome.result, RESULT);
  assert.ok(events.some((e) => e.event === 'section_finished'));
  assert.equal(model.state.calls, MODEL_CALLS);
  assert.deepEqual(await fetchJson(server, '/runs/r1/files'), WRITTEN);
  // Starting it again answers the ended run; another prompt or args under its id is refused.
  assert.equal((await start(server, 'r1')).outcome.result, outcome.result);
  const other = await fetch(`${server.url}/runs?id=r1&args=stop`, { method: 'POST', body: PROMPT });
  assert.equal(other.status, 500);
  assert.equal(model.state.calls, MODEL_CALLS);
  // Cancel: a run whose model call is held ends Cancelled, recorded.
  model.state.holdAt = 7;
  const held = new Promise((resolve) => { model.state.onHold = resolve; });
  await start(server, 'r2');
  await held;
  const cancelled = await fetchJson(server, '/runs/r2/cancel', { method: 'POST' });
  assert.equal(cancelled.status, 'ended');
  assert.equal(cancelled.outcome.error.kind, 'Cancelled');
  assert.equal((await fetchJson(server, '/runs/r2/journal')).at(-1).kind, 'end');
});

test('workerd SIGKILLed mid-run: the next request resumes the run to the uninterrupted result and files (seeded points)', { timeout: 300_000 }, async (t) => {
  const model = await provider(t);
  const dir = mkdtempSync(join(tmpdir(), 'runvil-run-kill-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeConfig(dir, model.baseURL);
  let server = await serveWorkerd(t, join(dir, 'run.capnp'));
  await start(server, 'whole');
  const whole = await attach(server, 'whole');
  const wholeFiles = await fetchJson(server, '/runs/whole/files');
  const wholeCalls = model.state.calls;
  const random = mulberry32(SEED);
  const trials = [];
  for (let trial = 0; trial < 6; trial++) {
    const at = 1 + Math.floor(random() * wholeCalls);
    const mode = trial % 2 === 0 ? 'hold' : 'after-reply';
    const id = `k${trial}`;
    const before = model.state.calls;
    const stop = new Promise((resolve) => {
      model.state.holdAt = mode === 'hold' ? before + at : 0;
      model.state.reportAt = mode === 'after-reply' ? before + at : 0;
      model.state.onHold = resolve;
      model.state.onReport = resolve;
    });
    await start(server, id);
    await stop;
    await server.kill();
    const atKill = model.state.calls - before;
    model.state.holdAt = 0;
    model.state.reportAt = 0;
    server = await serveWorkerd(t, join(dir, 'run.capnp'));
    const stored = (await fetchJson(server, `/runs/${id}/journal`)).filter((e) => e.kind === 'model').length;
    const resumed = await attach(server, id);
    const label = `trial ${trial} (seed ${SEED}): ${mode} at call ${at}`;
    assert.deepEqual([resumed.outcome.ok, resumed.outcome.result], [true, whole.outcome.result], label);
    assert.deepEqual(await fetchJson(server, `/runs/${id}/files`), wholeFiles, `${label}: the files`);
    const calls = model.state.calls - before;
    const inFlight = atKill - stored;
    assert.ok(inFlight >= 0 && inFlight <= 3, `${label}: ${inFlight} in flight`);
    assert.equal(calls, wholeCalls + inFlight, `${label}: calls`);
    trials.push({ mode, at, inFlight });
  }
  t.diagnostic(JSON.stringify(trials));
});
