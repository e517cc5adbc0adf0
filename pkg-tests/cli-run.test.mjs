// `runvil run` as people expect it: progress on a terminal only, --quiet, --events jsonl, --store,
// --limit-*, and the exit codes (0, 1, 2, 130).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PKG, luaPrompt } from './helpers.mjs';

const CLI = join(PKG, 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'runvil-cli-run-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function file(name, text) {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function cli(args, { tty = false } = {}) {
  // A terminal: util-linux `script` runs the CLI on a pseudo-terminal (stdout and stderr both).
  const [command, argv] = tty
    ? ['script', ['-qec', [process.execPath, CLI, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' '), '/dev/null']]
    : [process.execPath, [CLI, ...args]];
  return new Promise((resolve) => {
    execFile(command, argv, { cwd: dir }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, stdout: stdout.replaceAll('\r\n', '\n'), stderr });
    });
  });
}

const toolPrompt = file('tool.md', luaPrompt('tools.offer_local("grab", "Grab a value", {}, function() return "g" end)\nmessages:user("go")\nreturn models.loop()'));
const toolScript = file('tool.replies.json', JSON.stringify([
  { content: '', tool_calls: [{ id: 'c1', name: 'grab', arguments: {} }], finish_reason: 'tool_calls' },
  'done',
]));

test('on a terminal, progress shows each section, model round and tool call before the result', async () => {
  const r = await cli(['run', toolPrompt, '--model-script', toolScript], { tty: true });
  assert.equal(r.code, 0, r.stdout);
  assert.equal(r.stdout, '# Test\n## Main\n  model default · round 1\n  tool grab ✓\n  model default · round 2\ndone\n');
});

test('--quiet on a terminal, and any pipe, show the result alone', async () => {
  const quiet = await cli(['run', toolPrompt, '--model-script', toolScript, '--quiet'], { tty: true });
  assert.deepEqual(quiet, { code: 0, stdout: 'done\n', stderr: '' });
  const piped = await cli(['run', toolPrompt, '--model-script', toolScript]);
  assert.deepEqual(piped, { code: 0, stdout: 'done\n', stderr: '' });
});

test('--events jsonl is --events: one JSON object per line on stderr, the outcome last', async () => {
  const named = await cli(['run', toolPrompt, '--model-script', toolScript, '--events', 'jsonl', '--seed', '4']);
  const plain = await cli(['run', toolPrompt, '--model-script', toolScript, '--events', '--seed', '4']);
  assert.equal(named.code, 0);
  assert.equal(named.stdout, 'done\n');
  const events = named.stderr.trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(events.at(-1), { event: 'outcome', ok: true, seed: '4' });
  assert.ok(events.some((e) => e.event === 'tool_call_succeeded'));
  const strip = (text) => text.replace(/"execution":"[^"]*"/g, '').replace(/,"time":[0-9.e+]+/g, '');
  assert.equal(strip(named.stderr), strip(plain.stderr));
});

test('--store DIR keeps the run\'s files in a directory the next run reads', async () => {
  const store = join(dir, 'store');
  const write = file('write.md', luaPrompt("store.write('notes/today.txt', 'written by run ' .. args)\nreturn 'ok'"));
  assert.deepEqual(await cli(['run', write, '--store', store, '--args', '1']), { code: 0, stdout: 'ok\n', stderr: '' });
  assert.equal(readFileSync(join(store, 'notes/today.txt'), 'utf8'), 'written by run 1');
  const read = file('read.md', luaPrompt("return store.read('notes/today.txt')"));
  assert.deepEqual(await cli(['run', read, '--store', store]), { code: 0, stdout: 'written by run 1\n', stderr: '' });
});

test('--limit-instructions ends a runaway block with Limit (exit 1); a bad limit is a usage error (exit 2)', async () => {
  const loop = file('loop.md', luaPrompt('while true do end'));
  const r = await cli(['run', loop, '--limit-instructions', '100000']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^Limit: /);
  const bad = await cli(['run', loop, '--limit-instructions', '0']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^runvil: --limit-instructions must be a positive integer \(got '0'\)\n/);
});

test('Ctrl-C (SIGINT) cancels the run: "Cancelled: ..." and exit 130', { timeout: 60_000 }, async () => {
  const loop = file('forever.md', luaPrompt('while true do end'));
  const child = spawn(process.execPath, [CLI, 'run', loop, '--events'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const started = new Promise((resolve) => {
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (stderr.includes('"heading":"## Main"')) resolve();
    });
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  await started;
  child.kill('SIGINT');
  assert.deepEqual(await exited, { code: 130, signal: null });
  assert.match(stderr, /\nCancelled: [^\n]+\n {2}at [^\n]+:\d+ \(## Main\)\n$/);
});
