// The runvil CLI (pkg/cli.js) as a user runs it: exit codes, stdout/stderr.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PKG, ROOT, SMOKE_RESULT, luaPrompt, smokeSource } from './helpers.mjs';

const CLI = join(PKG, 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'runvil-cli-'));

function file(name, text) {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function cli(...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, stdout, stderr });
    });
  });
}

const smoke = file('smoke.md', smokeSource());

test('package.json declares the bin and cli.js is executable with a node shebang', () => {
  const pkg = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'));
  assert.deepEqual(pkg.bin, { runvil: './cli.js' });
  assert.match(readFileSync(CLI, 'utf8'), /^#!\/usr\/bin\/env node\n/);
  assert.ok(statSync(CLI).mode & 0o111, 'cli.js is executable');
});

test('run prints the result and exits 0', async () => {
  assert.deepEqual(await cli('run', smoke, '--seed', '5'), { code: 0, stdout: `${SMOKE_RESULT}\n`, stderr: '' });
});

test('a failing run exits 1 with "<Kind>: <message>" on stderr', async () => {
  const r = await cli('run', file('fail.md', luaPrompt('error("boom")')));
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^Lua: .*boom/);
});

test('--events ends with an outcome line carrying the seed', async () => {
  const r = await cli('run', smoke, '--events', '--seed', '11');
  assert.equal(r.code, 0);
  const lines = r.stderr.trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(lines.at(-1), { event: 'outcome', ok: true, seed: '11' });
});

test('--model-script serves replies to the model', async () => {
  const r = await cli('run', join(ROOT, 'examples/hello.md'), '--args', 'rivers',
    '--model-script', join(ROOT, 'examples/hello.replies.json'));
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^A poem about rivers:\n/);
});

test('usage errors exit 2 with the usage text', async () => {
  const cases = [
    [],
    ['walk', smoke],
    ['run'],
    ['run', join(dir, 'missing.md')],
    ['run', smoke, '--seed', 'abc'],
    ['run', smoke, '--bogus'],
    ['run', smoke, 'extra'],
    ['run', smoke, '--model-script', file('notarray.json', '{"a": 1}')],
    ['run', smoke, '--model-script', file('broken.json', '[')],
  ];
  for (const args of cases) {
    const r = await cli(...args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, /usage: runvil run <prompt\.md>/, args.join(' '));
  }
});

test('--help and --version exit 0', async () => {
  const help = await cli('--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--model-script FILE/);
  const version = await cli('--version');
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^runvil \d+\.\d+\.\d+/);
});

test('user-input/ask is answered from stdin, one line per ask; EOF closes the window', async () => {
  const prompt = file('ask.md', '---\nuses: [user-input]\n---\n# Ask\n\n## Main\n\n```lua\nlocal a = input.ask()\nlocal b = input.ask()\nreturn a .. "+" .. b\n```\n');
  const run = (stdin) => new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, 'run', prompt], { cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, stdout, stderr });
    });
    child.stdin.end(stdin);
  });
  assert.deepEqual(await run('one\ntwo\n'), { code: 0, stdout: 'one+two\n', stderr: '' });
  const closed = await run('only\n');
  assert.equal(closed.code, 1);
  assert.match(closed.stderr, /^Tool: tool call failure: the operator's window closed\n {2}at \S+ask\.md:\d+ \(## Main\)\n$/);
});
