// Every worked example of the reference chapters (spec-tests/*.cases) against the BUILT package:
// exact results and exact messages, byte for byte, through the public API. Cases with `file:`,
// `file-bytes:`, `read-only:` or `--- files` run against a `memoryStore` the test supplies and
// (with `--- files`) check its exact listing after the run. Cases with `model:`, `pack:` or `ui:`
// run with scripted models (their requests recorded for `--- requests`), Packs built from the case's
// JSON and the ui object; `--- events` / `--- events-absent` check the run's events. Cases of a file
// whose preamble says `status: target` run as node:test `todo` tests: reported, never failing the
// suite, with a pass/fail summary at the end.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine, memoryStore } from '../pkg/index.js';
import * as runvil from '../pkg/index.js';
import { loadCases, showFile } from './spec-cases.mjs';

const UNAVAILABLE = 'is not available in this version of Runvil';
const engine = await createEngine();
const SEED = 42;

// `<NONCE>` in a case's expectations and Pack results stands for the nonce of a run with SEED: the
// untrusted envelope's nonce depends only on the seed, so one probe run tells it.
const NONCE = await (async () => {
  const probe = await engine.run('# N\n\n## Main\n\n```lua\nreturn untrusted("")\n```\n', { seed: SEED });
  return (probe.ok && /untrusted_input_([0-9a-f]{32})/.exec(probe.result ?? '')?.[1]) || '<NONCE unavailable>';
})();

function withNonce(value) {
  if (typeof value === 'string') return value.replaceAll('<NONCE>', NONCE);
  if (Array.isArray(value)) return value.map(withNonce);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withNonce(v)]));
  return value;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A Pack tool from a case's JSON: returns `result` (or the next of `results`), throws `error`, or echoes. */
function caseTool(desc) {
  const { result, results, error, cause, echo, context, delay, ...tool } = desc;
  let next = 0;
  return {
    ...tool,
    async call(args, ctx) {
      if (delay) await sleep(delay);
      if (error !== undefined) throw cause === undefined ? new Error(withNonce(error)) : new Error(withNonce(error), { cause: new Error(cause) });
      if (echo) return JSON.stringify(args);
      if (context) return JSON.stringify({ args, caller: ctx?.caller, callId: ctx?.callId ?? '', section: ctx?.section });
      if (results !== undefined) {
        const r = results[Math.min(next++, results.length - 1)];
        return typeof r === 'string' ? withNonce(r) : r;
      }
      return typeof result === 'string' ? withNonce(result) : result;
    },
  };
}

/** A Response-returning fetch that answers from a case's `pages` map (404 for any other URL). */
function pagesFetch(pages = {}) {
  return async (input) => {
    const url = typeof input === 'string' ? input : input?.url ?? String(input);
    if (!(url in pages)) return new Response('not found', { status: 404, headers: { 'content-type': 'text/plain' } });
    return new Response(withNonce(pages[url]), { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  };
}

/** Builds the Packs a case serves; throws when it needs a reference Pack the package does not export yet. */
function casePack(desc) {
  if (desc.ref === 'web') {
    if (typeof runvil.webPack !== 'function') throw new Error('the package does not export webPack yet');
    return runvil.webPack({ fetch: pagesFetch(desc.pages), search: async () => desc.search ?? [] });
  }
  if (desc.ref === 'user-input') {
    if (typeof runvil.userInputPack !== 'function') throw new Error('the package does not export userInputPack yet');
    const answers = [...(desc.answers ?? [])];
    return runvil.userInputPack({
      ask: async () => {
        if (answers.length === 0) throw new Error('the case scripted no more operator answers');
        const a = answers.shift();
        if (typeof a === 'string') return a;
        throw a.cause === undefined ? new Error(a.error) : new Error(a.error, { cause: new Error(a.cause) });
      },
    });
  }
  if (desc.ref !== undefined) throw new Error(`unknown reference Pack ${JSON.stringify(desc.ref)}`);
  return { ...desc, tools: (desc.tools ?? []).map(caseTool) };
}

/** A request as plain JSON data (the AbortSignal left out). */
function plainRequest(request) {
  const { signal, ...rest } = request ?? {};
  return JSON.parse(JSON.stringify(rest));
}

/**
 * Subset match: an object matches when each wanted key matches; arrays match element by element with
 * equal lengths; `null` also matches an absent field; `{"$contains": s}` matches a string holding s;
 * `{"$absent": true}` matches only an absent field; a string wanted where an object is found matches
 * that object's `name` (so `"tools": ["web_fetch"]` checks tool names). Returns null or a complaint.
 */
function mismatch(want, got, path = '') {
  if (want === null) return got === null || got === undefined ? null : `${path}: want null/absent, got ${JSON.stringify(got)}`;
  if (Array.isArray(want)) {
    if (!Array.isArray(got)) return `${path}: want an array, got ${JSON.stringify(got)}`;
    if (want.length !== got.length) return `${path}: want ${want.length} entries, got ${got.length}: ${JSON.stringify(got)}`;
    for (let k = 0; k < want.length; k += 1) {
      const m = mismatch(want[k], got[k], `${path}[${k}]`);
      if (m) return m;
    }
    return null;
  }
  if (typeof want === 'object') {
    if ('$contains' in want) return typeof got === 'string' && got.includes(want.$contains) ? null : `${path}: want a string containing ${JSON.stringify(want.$contains)}, got ${JSON.stringify(got)}`;
    if ('$absent' in want) return got === undefined ? null : `${path}: want no field, got ${JSON.stringify(got)}`;
    if (got === null || typeof got !== 'object' || Array.isArray(got)) return `${path}: want an object, got ${JSON.stringify(got)}`;
    for (const [k, v] of Object.entries(want)) {
      const m = mismatch(v, got[k], `${path}.${k}`);
      if (m) return m;
    }
    return null;
  }
  if (typeof want === 'string' && got !== null && typeof got === 'object' && !Array.isArray(got)) {
    return got.name === want ? null : `${path}: want name ${JSON.stringify(want)}, got ${JSON.stringify(got)}`;
  }
  return Object.is(want, got) ? null : `${path}: want ${JSON.stringify(want)}, got ${JSON.stringify(got)}`;
}

const targetTally = new Map(); // file -> { pass, fail }
after(() => {
  for (const [file, { pass, fail }] of targetTally) {
    console.log(`# ${file} (status: target): ${pass} passed, ${fail} failed of ${pass + fail}`);
  }
});

async function storeListing(store) {
  const lines = [];
  for (const path of await store.list()) lines.push(showFile(path, await store.read(path)));
  return lines;
}

async function runCase(c) {
    const store = c.needsStore ? memoryStore(Object.fromEntries(c.files), { readOnly: c.readOnly }) : undefined;
    const options = { args: c.args, seed: SEED };
    if (store) options.store = store;
    const requests = [];
    const events = [];
    if (Object.keys(c.models).length > 0) {
      options.models = {};
      for (const [role, replies] of Object.entries(c.models)) {
        const model = runvil.scriptedModel(withNonce(replies));
        options.models[role] = async (request) => {
          requests.push(plainRequest(request));
          return model(request);
        };
      }
    }
    if (c.packs.length > 0) options.packs = c.packs.map(casePack);
    if (c.ui !== undefined) options.ui = c.ui;
    if (c.expectEvents || c.absentEvents) options.onEvent = (e) => events.push(JSON.parse(JSON.stringify(e)));
    const outcome = await engine.run(c.prompt, options);
    const expect = withNonce(c.expect);
    if (c.pending) {
      assert.equal(outcome.ok, false, `pending (${c.pending}) case now succeeds: remove its pending: line`);
      assert.ok(outcome.error.message.includes(UNAVAILABLE), `pending (${c.pending}): ${outcome.error.message}`);
      return;
    }
    if ('result' in expect) {
      assert.deepEqual(outcome.ok ? { result: outcome.result } : outcome.error, { result: expect.result });
    } else if ('message' in expect) {
      assert.equal(outcome.ok, false, `expected ${expect.kind}, got result ${JSON.stringify(outcome.result)}`);
      assert.deepEqual({ kind: outcome.error.kind, message: outcome.error.message }, { kind: expect.kind, message: expect.message });
    } else {
      assert.equal(outcome.ok, false, `expected ${expect.kind}, got result ${JSON.stringify(outcome.result)}`);
      assert.equal(outcome.error.kind, expect.kind, outcome.error.message);
      for (const part of expect.contains) assert.ok(outcome.error.message.includes(part), `${JSON.stringify(outcome.error.message)} lacks ${JSON.stringify(part)}`);
    }
    if (c.expectFiles) {
      const want = c.expectFiles.map(({ path, data }) => showFile(path, data));
      // Both sides in one order (code units), so the check does not depend on the store's sort.
      assert.deepEqual((await storeListing(store)).sort(), want.sort(), 'the store after the run');
    }
    if (c.expectRequests) {
      const want = withNonce(c.expectRequests);
      assert.equal(requests.length, want.length, `model requests: want ${want.length}, got ${requests.length}: ${JSON.stringify(requests)}`);
      want.forEach((w, k) => {
        const m = mismatch(w, requests[k], `request ${k + 1}`);
        assert.ok(m === null, m ?? '');
      });
    }
    if (c.expectEvents) {
      let at = 0;
      for (const [k, w] of withNonce(c.expectEvents).entries()) {
        while (at < events.length && mismatch(w, events[at]) !== null) at += 1;
        assert.ok(at < events.length, `event ${k + 1} ${JSON.stringify(w)} not found in order; events: ${JSON.stringify(events.map((e) => e.type ?? e.event))}`);
        at += 1;
      }
    }
    if (c.absentEvents) {
      for (const w of withNonce(c.absentEvents)) {
        const hit = events.find((e) => mismatch(w, e) === null);
        assert.ok(hit === undefined, `an event matches ${JSON.stringify(w)}: ${JSON.stringify(hit)}`);
      }
    }
}

for (const c of loadCases()) {
  const title = `${c.name} (${c.file}:${c.line})`;
  if (!c.target) {
    test(title, () => runCase(c));
    continue;
  }
  test(title, { todo: 'status: target' }, async () => {
    const tally = targetTally.get(c.file) ?? { pass: 0, fail: 0 };
    targetTally.set(c.file, tally);
    try {
      await runCase(c);
      tally.pass += 1;
    } catch (error) {
      tally.fail += 1;
      throw error;
    }
  });
}
