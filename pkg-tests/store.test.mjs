// The store bridge through the public API: files the run leaves, batching, durability on
// failure, read-only stores, failing backends, input/output files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine, memoryStore } from '../pkg/index.js';
import { luaPrompt } from './helpers.mjs';

const engine = await createEngine();

/** Wraps a store and counts the calls the engine makes. */
function counting(inner) {
  const calls = { open: 0, read: 0, commit: 0, changes: 0 };
  return {
    calls,
    store: {
      open: () => { calls.open += 1; return inner.open(); },
      read: (p) => { calls.read += 1; return inner.read(p); },
      commit: (changes) => { calls.commit += 1; calls.changes += changes.length; return inner.commit(changes); },
      list: () => inner.list(),
    },
  };
}

test('a run leaves its files in the host store', async () => {
  const store = memoryStore({ 'paper.md': 'the paper body' });
  const src = '---\ninput: [paper.md]\noutput: [report.md]\n---\n# R\n\n## Main\n\n```lua\nstore.write(\'report.md\', \'report on: \' .. store.read(\'paper.md\'))\n```\n';
  const o = await engine.run(src, { store });
  assert.deepEqual(o, { ok: true, result: null, seed: o.seed });
  assert.equal(await store.read('report.md'), 'report on: the paper body');
});

test('a 1,000-operation block costs one open and one commit', async () => {
  const { store, calls } = counting(memoryStore());
  const o = await engine.run(luaPrompt("for i = 1, 1000 do store.append('log.txt', i .. '\\n') end\nreturn #store.read('log.txt')"), { store });
  assert.equal(o.result, '3893');
  assert.deepEqual(calls, { open: 1, read: 0, commit: 1, changes: 1 });
});

test('writes to many files go out in batches, in order', async () => {
  const { store, calls } = counting(memoryStore());
  const o = await engine.run(luaPrompt("for i = 1, 1000 do store.write('f/' .. i .. '.txt', 'x') end\nreturn #store.glob('f/*.txt')"), { store });
  assert.equal(o.result, '1000');
  assert.equal(calls.changes, 1000);
  assert.ok(calls.commit <= 5, `commits: ${calls.commit}`);
  assert.equal((await store.list()).length, 1000);
});

test('a failing run still lands every write it made first', async () => {
  const store = memoryStore();
  const o = await engine.run(luaPrompt("store.write('a.txt', 'kept')\nstore.append('a.txt', ' and more')\nerror('boom')"), { store });
  assert.equal(o.error.kind, 'Lua');
  assert.equal(await store.read('a.txt'), 'kept and more');
  const limited = memoryStore();
  const l = await engine.run(luaPrompt("store.write('b.txt', 'before')\nwhile true do end"), { store: limited });
  assert.equal(l.error.kind, 'Limit');
  assert.equal(await limited.read('b.txt'), 'before');
});

test('contents are served from the listing without a read per call', async () => {
  const { store, calls } = counting(memoryStore({ 'seed.txt': 'one\ntwo' }));
  const o = await engine.run(luaPrompt("local n = 0\nfor i = 1, 100 do n = n + #store.read('seed.txt') end\nreturn n"), { store });
  assert.equal(o.result, '700');
  assert.equal(calls.read, 0);
});

test('a lazy backend is read once per file', async () => {
  const inner = memoryStore({ 'big.txt': 'lazy' });
  const { store, calls } = counting({
    open: async () => ({ files: [{ path: 'big.txt' }] }),
    read: (p) => inner.read(p),
    commit: (c) => inner.commit(c),
  });
  const o = await engine.run(luaPrompt("return store.read('big.txt') .. store.read('big.txt')"), { store });
  assert.equal(o.result, 'lazylazy');
  assert.equal(calls.read, 1);
});

test('a read-only store refuses writes with permission_denied', async () => {
  const store = memoryStore({ 'x.md': 'x' }, { readOnly: true });
  const o = await engine.run(luaPrompt("local ok, e = pcall(store.write, 'y.md', 'y')\nreturn e.reason .. ' | ' .. e.message .. ' | ' .. store.read('x.md')"), { store });
  assert.equal(o.result, 'permission_denied | permission denied in store: y.md | x');
  assert.deepEqual(await store.list(), ['x.md']);
});

test('a backend failing at start fails the run with Vfs', async () => {
  const broken = { open: async () => { throw new Error('disk on fire'); }, read: async () => undefined, commit: async () => {} };
  const o = await engine.run(luaPrompt("return 'never'"), { store: broken });
  assert.deepEqual(o.error, { kind: 'Vfs', message: 'store backend failure: disk on fire' });
});

test('a backend failing to commit fails the run with Vfs', async () => {
  const inner = memoryStore();
  const flaky = { open: () => inner.open(), read: (p) => inner.read(p), commit: async () => { throw new Error('quota exceeded'); } };
  const o = await engine.run(luaPrompt("store.write('a', 'b')\nreturn 'done'"), { store: flaky });
  assert.deepEqual({ kind: o.error.kind, message: o.error.message }, { kind: 'Vfs', message: 'store backend failure: quota exceeded' });
});

test('bytes that are not UTF-8 survive and reading them is not_utf8', async () => {
  const store = memoryStore({ 'raw.bin': new Uint8Array([0xff, 0xfe]) });
  const o = await engine.run(luaPrompt("local ok, e = pcall(store.read, 'raw.bin')\nstore.write('copy.txt', 'ok')\nreturn e.reason"), { store });
  assert.equal(o.result, 'not_utf8');
  assert.deepEqual(await store.read('raw.bin'), new Uint8Array([0xff, 0xfe]));
});

test('input and output files are checked', async () => {
  const missing = await engine.run('---\ninput: [a.md, b.md]\n---\n# I\n', { store: memoryStore({ 'a.md': 'a' }) });
  assert.deepEqual(missing.error, { kind: 'RequirementsUnmet', message: 'the environment cannot satisfy this prompt:\n- missing input file: b.md' });
  const unwritten = await engine.run('---\noutput: [out.md]\n---\n# O\n\n## Main\n\n```lua\nreturn "done"\n```\n');
  assert.deepEqual(unwritten.error, { kind: 'Vfs', message: 'output file not written: out.md' });
});

test('a store argument of the wrong shape is a TypeError', async () => {
  await assert.rejects(engine.run('# T\n', { store: { read() {} } }), TypeError);
});
