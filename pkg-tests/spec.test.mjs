// Every worked example of the reference chapters (spec-tests/*.cases) against the BUILT package:
// exact results and exact messages, byte for byte, through the public API. Cases with `file:`,
// `file-bytes:`, `read-only:` or `--- files` run against a `memoryStore` the test supplies and
// (with `--- files`) check its exact listing after the run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine, memoryStore } from '../pkg/index.js';
import { loadCases, showFile } from './spec-cases.mjs';

const UNAVAILABLE = 'is not available in this version of Runvil';
const engine = await createEngine();

async function storeListing(store) {
  const lines = [];
  for (const path of await store.list()) lines.push(showFile(path, await store.read(path)));
  return lines;
}

for (const c of loadCases()) {
  test(`${c.name} (${c.file}:${c.line})`, async () => {
    const store = c.needsStore ? memoryStore(Object.fromEntries(c.files), { readOnly: c.readOnly }) : undefined;
    const outcome = await engine.run(c.prompt, store ? { args: c.args, seed: 42, store } : { args: c.args, seed: 42 });
    if (c.pending) {
      assert.equal(outcome.ok, false, `pending (${c.pending}) case now succeeds: remove its pending: line`);
      assert.ok(outcome.error.message.includes(UNAVAILABLE), `pending (${c.pending}): ${outcome.error.message}`);
      return;
    }
    if ('result' in c.expect) {
      assert.deepEqual(outcome.ok ? { result: outcome.result } : outcome.error, { result: c.expect.result });
    } else if ('message' in c.expect) {
      assert.equal(outcome.ok, false, `expected ${c.expect.kind}, got result ${JSON.stringify(outcome.result)}`);
      assert.deepEqual({ kind: outcome.error.kind, message: outcome.error.message }, { kind: c.expect.kind, message: c.expect.message });
    } else {
      assert.equal(outcome.ok, false, `expected ${c.expect.kind}, got result ${JSON.stringify(outcome.result)}`);
      assert.equal(outcome.error.kind, c.expect.kind, outcome.error.message);
      for (const part of c.expect.contains) assert.ok(outcome.error.message.includes(part), `${JSON.stringify(outcome.error.message)} lacks ${JSON.stringify(part)}`);
    }
    if (c.expectFiles) {
      const want = c.expectFiles.map(({ path, data }) => showFile(path, data));
      // Both sides in one order (code units), so the check does not depend on the store's sort.
      assert.deepEqual((await storeListing(store)).sort(), want.sort(), 'the store after the run');
    }
  });
}
