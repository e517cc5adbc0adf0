// directoryStore: the store bridge on a directory (Node entry), its files plain files, each batch
// applied whole or not at all even when the process is killed in the middle of one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, directoryStore } from '../pkg/index.js';
import { luaPrompt } from './helpers.mjs';

const engine = await createEngine();

function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'runvil-dirstore-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('a run writes plain files; the next run reads them back, deletes, keeps directories', async (t) => {
  const dir = tempDir(t);
  const first = await engine.run(luaPrompt("store.write('notes/a.txt', 'alpha')\nstore.write('b.bin', '\\255\\0\\1')\nstore.write('gone.txt', 'x')\nreturn 'ok'"), { store: directoryStore(dir) });
  assert.deepEqual(first, { ok: true, result: 'ok', seed: first.seed });
  assert.equal(readFileSync(join(dir, 'notes/a.txt'), 'utf8'), 'alpha');
  assert.deepEqual([...readFileSync(join(dir, 'b.bin'))], [255, 0, 1]);

  const store = directoryStore(dir);
  assert.deepEqual(await store.list(), ['b.bin', 'gone.txt', 'notes/a.txt']);
  assert.deepEqual(await store.read('b.bin'), new Uint8Array([255, 0, 1]));
  assert.equal(await store.read('missing.txt'), undefined);
  const second = await engine.run(luaPrompt("store.delete('gone.txt')\nstore.delete('notes/a.txt')\nlocal ok, err = pcall(store.read, 'b.bin')\nreturn err.reason"), { store });
  assert.equal(second.result, 'not_utf8', 'the bytes came back as bytes');
  assert.deepEqual(await store.list(), ['b.bin']);
  assert.ok(existsSync(join(dir, 'notes')), 'a directory outlives its last file');
  const third = await engine.run(luaPrompt("return tostring(store.exists('b.bin')) .. ' ' .. tostring(store.exists('gone.txt'))"), { store: directoryStore(dir) });
  assert.equal(third.result, 'true false');
  assert.deepEqual(readdirSync(dir).sort(), ['b.bin', 'notes'], 'no bookkeeping file is left behind');
});

test('a read-only directory store refuses changes', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'a.txt'), 'kept');
  const outcome = await engine.run(luaPrompt("local ok, err = pcall(store.write, 'a.txt', 'new')\nreturn store.read('a.txt') .. ' ' .. err.reason"), { store: directoryStore(dir, { readOnly: true }) });
  assert.equal(outcome.result, 'kept permission_denied');
  assert.equal(readFileSync(join(dir, 'a.txt'), 'utf8'), 'kept');
});

test('directoryStore checks its argument and the paths it is handed', async () => {
  assert.throws(() => directoryStore(''), { name: 'TypeError', message: 'directoryStore: dir must be a directory path' });
  const store = directoryStore(join(tmpdir(), 'runvil-never-created'));
  await assert.rejects(store.read('../etc/passwd'), { name: 'TypeError', message: 'directoryStore.read: not a store path: "../etc/passwd"' });
});

// ---- crash safety ---------------------------------------------------------------------------

const FILES = 600;
/** One block rewriting every file: the engine commits batches of 256, 256 and 88 writes. */
const REWRITE = luaPrompt(`for i = 1, ${FILES} do store.write('f/' .. i .. '.txt', 'new ' .. i) end\nreturn 'done'`);
const BATCHES = [256, 256, 88];

/** How many files the run had rewritten when it died before rename number `killAt`. */
function expectedRewritten(killAt) {
  // Each batch renames its journal first (a batch whose journal landed is completed on reopen),
  // then one temporary file per write.
  let rename = 1;
  let done = 0;
  for (const size of BATCHES) {
    if (killAt <= rename) return done;
    done += size;
    rename += size + 1;
  }
  return done;
}

function runChild(dir, killAt, promptFile) {
  return new Promise((resolve) => {
    execFile(process.execPath, [new URL('./stores/crash-child.mjs', import.meta.url).pathname, dir, String(killAt), promptFile],
      (error, stdout) => resolve({ signal: error?.signal ?? null, stdout }));
  });
}

test('a process killed mid-batch leaves whole batches: the journal completes a landed batch, nothing of one that did not land', { timeout: 180_000 }, async (t) => {
  const root = tempDir(t);
  const promptFile = join(root, 'rewrite.md');
  writeFileSync(promptFile, REWRITE);
  // Unkilled, the run makes exactly the renames the expectation counts.
  const clean = await runChild(join(root, 'clean'), 0, promptFile);
  assert.equal(clean.signal, null);
  assert.deepEqual(JSON.parse(clean.stdout).renames, BATCHES.reduce((n, size) => n + size + 1, 0));

  const total = BATCHES.reduce((n, size) => n + size + 1, 0);
  for (const killAt of [1, 2, 3, 150, 257, 258, 259, 260, 514, 515, 516, 600, total]) {
    const dir = join(root, `kill-${killAt}`);
    const before = await engine.run(luaPrompt(`for i = 1, ${FILES} do store.write('f/' .. i .. '.txt', 'old') end`), { store: directoryStore(dir) });
    assert.equal(before.ok, true);

    const child = await runChild(dir, killAt, promptFile);
    assert.equal(child.signal, 'SIGKILL', `killed before rename ${killAt}`);

    // Reopening completes a batch whose journal landed and sweeps temporary files.
    const store = directoryStore(dir);
    const listing = await store.open();
    assert.equal(listing.files.length, FILES);
    const contents = await Promise.all(Array.from({ length: FILES }, (_, i) => store.read(`f/${i + 1}.txt`)));
    const rewritten = contents.filter((text) => text !== 'old').length;
    assert.equal(rewritten, expectedRewritten(killAt), `killed before rename ${killAt}`);
    assert.deepEqual(contents, Array.from({ length: FILES }, (_, i) => (i < rewritten ? `new ${i + 1}` : 'old')),
      'the rewritten files are a prefix of the run\'s batches');
    assert.deepEqual(readdirSync(dir), ['f']);
    assert.equal(readdirSync(join(dir, 'f')).filter((name) => name.endsWith('.')).length, 0, 'no temporary file is left');
  }
});
