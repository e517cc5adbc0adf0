// The JS↔Rust contract in one place: the option keys the wrapper sends runPrompt (js/core/engine.js),
// the keys the module reads (src/wasm/options.rs, listed by its bridgeKeys()) and the keys
// docs/bridge.md describes are the same sets, so a key renamed on one side fails here instead of
// being read as a silent default.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine, memoryStore, scriptedModel } from '../pkg/index.js';
import { ROOT } from './helpers.mjs';

const engine = await createEngine();
const rust = engine[Symbol.for('runvil.bridgeKeys')]();
const sorted = (keys) => [...keys].sort();

/** The fields of `interface NAME { ... }` (or of an inline `name?: { ... }`) in docs/bridge.md. */
function documented() {
  const doc = readFileSync(join(ROOT, 'docs/bridge.md'), 'utf8');
  const block = /interface BridgeOptions \{\n([\s\S]*?)\n\}/.exec(doc)?.[1];
  assert.ok(block, 'docs/bridge.md has an interface BridgeOptions block');
  const fields = (text) => [...text.matchAll(/^\s*([A-Za-z]+)\??:/gm)].map((m) => m[1]);
  const inline = (name) => {
    const line = block.split('\n').find((l) => new RegExp(`^\\s*${name}\\??:`).test(l));
    const body = /\{(.*)\}/.exec(line ?? '')?.[1] ?? '';
    return [...body.matchAll(/([A-Za-z]+)\??:/g)].map((m) => m[1]);
  };
  return { run: fields(block), limits: inline('limits'), ui: inline('ui') };
}

test('the wrapper sends, the module reads and docs/bridge.md describes the same option keys', () => {
  const every = {
    args: 'a',
    seed: 1,
    models: { default: scriptedModel(['x']) },
    packs: [],
    store: memoryStore(),
    signal: new AbortController().signal,
    onEvent: () => {},
    limits: Object.fromEntries(rust.limits.map((k) => [k, 1])),
    ui: { kind: 'test', interactive: false },
  };
  const sent = engine[Symbol.for('runvil.bridgeOf')](every);
  const doc = documented();
  for (const part of ['run', 'limits', 'ui']) {
    assert.deepEqual(
      sorted(sent[part]),
      sorted(rust[part]),
      `${part}: what js/core/engine.js sends vs what src/wasm reads`,
    );
    assert.deepEqual(sorted(doc[part]), sorted(rust[part]), `${part}: docs/bridge.md vs what src/wasm reads`);
  }
});
