// What an engine's start-up does and does not do (docs/performance.md, "Start-up"): in Node the
// default seed comes from the system's random device, never Web Crypto (whose first use loads a
// whole module); the module bytes the package reads itself are released once compiled, a caller's
// never; the journal, trace and check modules are loaded by the first call that uses them, and
// those calls behave as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { deviceSeeds, randomSeed } from '../pkg/core/seeds.js';
import { compileOwnBytes, loadModule } from '../pkg/core/load.js';
import { PKG } from './helpers.mjs';

const U64 = /^(0|[1-9][0-9]*)$/;
const isU64 = (seed) => U64.test(seed) && BigInt(seed) < 1n << 64n;
const INDEX = new URL('index.js', `file://${PKG}`).href;

/** Runs `code` (an ES module body) in a fresh Node process; answers what it printed, as JSON. */
function inChild(code, flags = []) {
  return JSON.parse(execFileSync(process.execPath, [...flags, '--input-type=module', '-e', code], { encoding: 'utf8' }));
}

test('a script whose only work is awaiting createEngine runs on, however V8 compiles', () => {
  // Eager compilation keeps V8 busy off the main thread for longer than lazy, which Node (24) did
  // not count as pending work: the process exited with the module still compiling.
  for (const entry of ['index.js', 'inline.js']) {
    for (const flags of [[], ['--no-wasm-lazy-compilation']]) {
      const out = inChild(`
        const { createEngine } = await import(${JSON.stringify(new URL(entry, `file://${PKG}`).href)});
        const engine = await createEngine();
        console.log(JSON.stringify((await engine.run("# T\\n\\n\`\`\`lua\\nreturn 'ok'\\n\`\`\`\\n")).result));`, flags);
      assert.equal(out, 'ok', `${entry} ${flags.join(' ') || 'with default flags'}`);
    }
  }
});

test('the Node entry draws default seeds without Web Crypto, each one different', () => {
  const out = inChild(`
    // Web Crypto's getter throws: a default seed drawn through it would fail the run.
    Object.defineProperty(globalThis, 'crypto', { get() { throw new Error('Web Crypto was loaded'); } });
    const { createEngine } = await import(${JSON.stringify(INDEX)});
    const engine = await createEngine();
    const outcomes = [];
    for (let i = 0; i < 40; i++) outcomes.push(await engine.run("# T\\n\\n\`\`\`lua\\nreturn sys.execution\\n\`\`\`\\n"));
    console.log(JSON.stringify(outcomes.map((o) => ({ ok: o.ok, seed: o.seed, result: o.result, error: o.error }))));`);
  assert.equal(out.length, 40);
  for (const o of out) assert.ok(o.ok, JSON.stringify(o.error));
  for (const o of out) assert.ok(isU64(o.seed), `seed ${o.seed}`);
  assert.equal(new Set(out.map((o) => o.seed)).size, 40, 'every run got its own seed');
  assert.equal(new Set(out.map((o) => o.result)).size, 40, 'and its own execution id');
});

test('deviceSeeds reads the device once for many seeds and hands each out once', () => {
  let opened = 0;
  let next = 1n;
  const fake = {
    openSync: () => ++opened,
    readSync: (_fd, pool) => {
      for (let i = 0; i < pool.length; i++) pool[i] = next++;
      return pool.byteLength;
    },
    closeSync: () => {},
  };
  const draw = deviceSeeds(fake);
  const seeds = Array.from({ length: 64 }, draw);
  assert.equal(opened, 2, '32 seeds per read');
  assert.equal(new Set(seeds).size, 64);
  assert.deepEqual([...seeds].map(BigInt).sort((a, b) => (a < b ? -1 : 1)), Array.from({ length: 64 }, (_, i) => BigInt(i + 1)));
});

test('deviceSeeds over the real device gives distinct u64 seeds', () => {
  const draw = deviceSeeds(fs);
  const seeds = Array.from({ length: 100 }, draw);
  for (const seed of seeds) assert.ok(isU64(seed), seed);
  assert.equal(new Set(seeds).size, 100);
});

test('deviceSeeds falls back to Web Crypto where the device cannot be read, and stays there', () => {
  for (const broken of [
    { openSync: () => { throw Object.assign(new Error('no such file'), { code: 'ENOENT' }); } },
    { openSync: () => 3, readSync: () => 4, closeSync: () => {} }, // a short read
    { openSync: () => 3, readSync: () => { throw new Error('EIO'); }, closeSync: () => { throw new Error('EBADF'); } },
  ]) {
    let calls = 0;
    const counted = new Proxy(broken, { get: (target, key) => ((...args) => { calls += 1; return target[key](...args); }) });
    const draw = deviceSeeds(/** @type {any} */ (counted));
    const seeds = Array.from({ length: 10 }, draw);
    for (const seed of seeds) assert.ok(isU64(seed), seed);
    assert.equal(new Set(seeds).size, 10);
    const afterFirst = calls;
    draw();
    assert.equal(calls, afterFirst, 'a device that failed once is not asked again');
  }
  assert.ok(isU64(randomSeed()));
});

test('journal.js, trace.js and check.js load only with the first call that uses them', () => {
  const out = inChild(`
    import { register } from 'node:module';
    import { MessageChannel } from 'node:worker_threads';
    const { port1, port2 } = new MessageChannel();
    const loaded = new Set();
    port1.on('message', (url) => loaded.add(url.slice(url.lastIndexOf('/') + 1)));
    port1.unref();
    const hooks = 'let port; export function initialize(data) { port = data.port; } ' +
      'export async function resolve(specifier, context, next) { const r = await next(specifier, context); port.postMessage(r.url); return r; }';
    register('data:text/javascript,' + encodeURIComponent(hooks), { data: { port: port2 }, transferList: [port2] });
    // The hooks answer on another thread: a round trip through it makes sure every resolve so far was heard.
    const settle = () => new Promise((resolve) => setTimeout(resolve, 200));
    const optional = () => ['journal.js', 'trace.js', 'check.js'].filter((f) => loaded.has(f));
    const { createEngine } = await import(${JSON.stringify(INDEX)});
    const engine = await createEngine();
    const source = "# T\\n\\n\`\`\`lua\\nreturn 'ok'\\n\`\`\`\\n";
    const plain = await engine.run(source);
    await settle();
    const steps = { plain: [plain.result, optional()] };
    const recorded = await engine.run(source, { record: true });
    await settle();
    steps.record = [recorded.result, Array.isArray(recorded.journal), optional()];
    const replayed = await engine.run(source, { replay: recorded.journal });
    steps.replay = [replayed.ok, replayed.result];
    const spans = [];
    const tracer = { startSpan: (name) => ({ setAttribute() {}, setStatus() {}, recordException() {}, end() { spans.push(name); } }) };
    const traced = await engine.run(source, { tracer });
    await settle();
    steps.trace = [traced.result, spans.length > 0, optional()];
    const checked = await engine.check("# T\\n\\n\`\`\`lua\\nreturn (\\n\`\`\`\\n");
    await settle();
    steps.check = [checked.map((d) => d.kind), optional()];
    const misuse = await engine.run(source, { record: 'yes' }).catch((e) => e.constructor.name + ': ' + e.message);
    const badTracer = await engine.run(source, { tracer: {} }).catch((e) => e.constructor.name);
    const badCheck = await engine.check(source, { nope: 1 }).catch((e) => e.constructor.name);
    steps.misuse = [misuse, badTracer, badCheck];
    console.log(JSON.stringify(steps));`);
  assert.deepEqual(out.plain, ['ok', []], 'a plain run loads none of them');
  assert.deepEqual(out.record, ['ok', true, ['journal.js']]);
  assert.deepEqual(out.replay, [true, 'ok']);
  assert.deepEqual(out.trace, ['ok', true, ['journal.js', 'trace.js']]);
  assert.deepEqual(out.check, [['Lua'], ['journal.js', 'trace.js', 'check.js']]);
  assert.match(out.misuse[0], /^TypeError: engine\.run: record must be true or a function/);
  assert.deepEqual(out.misuse.slice(1), ['TypeError', 'TypeError']);
});

test('bytes the package read are released once compiled; a caller\'s bytes are left as given', async () => {
  const read = () => new Uint8Array(fs.readFileSync(new URL('runvil_bg.wasm', `file://${PKG}`)));
  const own = read();
  const length = own.byteLength;
  assert.ok((await compileOwnBytes(own, '')) instanceof WebAssembly.Module);
  // ArrayBuffer.prototype.transfer: Node 21 and later, Deno, Bun, browsers; Node 20 leaves it to the collector.
  const canRelease = typeof ArrayBuffer.prototype.transfer === 'function';
  assert.equal(own.buffer.byteLength, canRelease ? 0 : length);
  // Where there is no transfer, a resizable buffer (what the Node entry reads its module into, and
  // the inline entry decodes into) is shrunk to nothing instead.
  const resizable = new Uint8Array(new ArrayBuffer(length, { maxByteLength: length }));
  resizable.set(read());
  assert.ok((await compileOwnBytes(resizable, '')) instanceof WebAssembly.Module);
  assert.equal(resizable.buffer.byteLength, 0);
  const given = read();
  assert.ok((await loadModule(given, import.meta.url)) instanceof WebAssembly.Module);
  assert.equal(given.buffer.byteLength, length, 'the caller keeps its bytes');
  // A view over part of a larger buffer is never detached (it may share the buffer with others).
  const shared = new Uint8Array(length + 16);
  shared.set(read(), 8);
  const part = shared.subarray(8, 8 + length);
  assert.ok((await compileOwnBytes(part, '')) instanceof WebAssembly.Module);
  assert.equal(shared.buffer.byteLength, length + 16);
  // Bytes that are no module are refused with the usual message, and released all the same.
  const page = new TextEncoder().encode('<!doctype html><p>not found');
  await assert.rejects(compileOwnBytes(page, ''), /got HTML instead of a WebAssembly module/);
  assert.equal(page.buffer.byteLength, canRelease ? 0 : page.byteLength);
});

test('two engines in one process each get a module from the package\'s own bytes', () => {
  for (const entry of ['index.js', 'inline.js']) {
    const out = inChild(`
      const { createEngine } = await import(${JSON.stringify(new URL('.', `file://${PKG}`).href)} + ${JSON.stringify(entry)});
      const results = [];
      for (let i = 0; i < 2; i++) results.push((await (await createEngine()).run("# T\\n\\n\`\`\`lua\\nreturn 'ok'\\n\`\`\`\\n", { seed: i })).result);
      console.log(JSON.stringify(results));`);
    assert.deepEqual(out, ['ok', 'ok'], entry);
  }
});
