// Durable runs proved by killing (docs/durable.md): `runvil run --journal --store` SIGKILLed at
// every journal append (before the entry is written, and after it is on disk but before the answer
// reaches the run) and around every store commit, over a prompt with a tool loop, a fanout, `call`,
// appends and a path that is a directory and then a file; some resumed runs are killed again at a
// seeded point. After the last resume: the uninterrupted run's result and files, and exactly its
// model calls plus the calls that were in flight at the kills. The model and the tool are JS
// modules of the test (pkg-tests/durable/cli-parts.mjs) that count their calls in a file, across
// processes.
// RUNVIL_KILL_SEED picks the second kills.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PKG, ROOT, mulberry32, tree } from './helpers.mjs';
import { ARGS, MODEL_CALLS, PROMPT, RESULT, SEED_FILES, WRITTEN } from './durable/fixture.mjs';

const CLI = join(PKG, 'cli.js');
const SEED = Number(process.env.RUNVIL_KILL_SEED ?? 20261205);
const work = mkdtempSync(join(tmpdir(), 'runvil-durable-kill-'));

const prompt = join(work, 'durable.md');
writeFileSync(prompt, PROMPT);
const PARTS = join(ROOT, 'pkg-tests/durable/cli-parts.mjs');

const lines = (path) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);

/** One `runvil run` of the trial in `dir`, killed at `kill` when given; its exit and what it added. */
function runCli(dir, kill) {
  const journal = join(dir, 'run.jsonl');
  const count = join(dir, 'calls.txt');
  const entriesBefore = lines(journal).length;
  const callsBefore = lines(count).filter((l) => l.startsWith('model ')).length;
  return new Promise((resolve) => {
    const env = { ...process.env, COUNT_FILE: count, RUNVIL_TEST_KILL: kill ?? '' };
    execFile(
      process.execPath,
      [CLI, 'run', prompt, '--args', ARGS, '--seed', '7', '--quiet', '--no-mcp-json',
        '--model', `module:${PARTS}#model`, '--pack', PARTS, '--store', join(dir, 'store'), '--journal', journal],
      { cwd: ROOT, env },
      (error, stdout, stderr) => {
        const entries = lines(journal).slice(entriesBefore).map((l) => JSON.parse(l));
        const calls = lines(count).filter((l) => l.startsWith('model ')).length - callsBefore;
        resolve({
          killed: error?.signal === 'SIGKILL',
          code: error ? error.code : 0,
          stdout,
          stderr,
          calls,
          // Calls that got no entry: in flight when the process died.
          inFlight: calls - entries.filter((e) => e.kind === 'model').length,
        });
      },
    ).stdin.end('');
  });
}

function trialDir(name) {
  const dir = join(work, name);
  mkdirSync(join(dir, 'store'), { recursive: true });
  for (const [path, text] of Object.entries(SEED_FILES)) writeFileSync(join(dir, 'store', path), text);
  return dir;
}

const baseDir = trialDir('whole');
const whole = await runCli(baseDir);
const final = tree(join(baseDir, 'store'));
const appends = lines(join(baseDir, 'run.jsonl')).length;

test('the uninterrupted run: its result, files and calls', () => {
  assert.equal(whole.code, 0, whole.stderr);
  assert.equal(whole.stdout, `${RESULT}\n`);
  assert.deepEqual(final, { 'arms/': true, ...WRITTEN, 'keep.txt': SEED_FILES['keep.txt'] });
  assert.equal(whole.calls, MODEL_CALLS);
  assert.ok(appends >= 12, `${appends} journal lines`);
});

/** Kill points: every journal append, before and after; the first commits, before and after. */
const points = [];
for (let n = 1; n <= appends; n++) points.push(`append:${n}:before`, `append:${n}:after`);
for (let n = 1; n <= 4; n++) points.push(`commit:${n}:before`, `commit:${n}:after`);

test(`SIGKILLed at ${points.length} points, a resumed run ends as the uninterrupted one and pays only for calls in flight`, async () => {
  assert.ok(points.length >= 30);
  const random = mulberry32(SEED);
  let killedAt = 0;
  const trials = [];
  for (const [i, point] of points.entries()) trials.push({ i, point, again: random() < 0.3 ? Math.ceil(random() * appends) : 0 });
  // Two trials at a time: each is a sequence of processes on its own directory.
  const runTrial = async ({ i, point, again }) => {
    const dir = trialDir(`t${i}`);
    const runs = [await runCli(dir, point)];
    // A commit point past the run's last batch never fires: the run just ends.
    if (!point.startsWith('commit:')) assert.ok(runs[0].killed, `${point}: the process was killed`);
    if (runs[0].killed) killedAt++;
    // Some resumed runs are killed again, at a seeded append of theirs.
    if (again) runs.push(await runCli(dir, `append:${again}:${random() < 0.5 ? 'before' : 'after'}`));
    const last = await runCli(dir);
    runs.push(last);
    const where = `${point}${again ? ` then append:${again}` : ''}`;
    assert.equal(last.code, 0, `${where}: ${last.stderr}`);
    assert.equal(last.stdout, whole.stdout, where);
    assert.deepEqual(tree(join(dir, 'store')), final, `${where}: the store`);
    const journal = lines(join(dir, 'run.jsonl')).map((l) => JSON.parse(l));
    assert.equal(journal.at(-1).kind, 'end', where);
    assert.equal(journal.filter((e) => e.kind === 'model').length, whole.calls, `${where}: one entry per model call`);
    const inFlight = runs.reduce((n, r) => n + (r.killed ? r.inFlight : 0), 0);
    const calls = runs.reduce((n, r) => n + r.calls, 0);
    assert.equal(calls, whole.calls + inFlight, `${where}: calls made`);
    for (const r of runs) assert.ok(r.inFlight <= 3, `${where}: at most the fanout's 3 calls in flight`);
    // A finished log replays: no call, the same output, the store unchanged.
    const replayed = await runCli(dir);
    assert.deepEqual([replayed.code, replayed.stdout, replayed.calls], [0, whole.stdout, 0], where);
    assert.deepEqual(tree(join(dir, 'store')), final, `${where}: the store after a replay`);
  };
  const queue = [...trials];
  await Promise.all([0, 1].map(async () => {
    while (queue.length) await runTrial(queue.shift());
  }));
  assert.ok(killedAt >= 30, `${killedAt} kills landed`);
});

test('--journal refuses a log of another prompt or argument string; --fresh starts over', async () => {
  const dir = trialDir('other');
  const journal = join(dir, 'run.jsonl');
  const first = await runCli(dir, 'append:6:after');
  assert.equal(first.killed, true);
  const cli = (...args) => new Promise((resolve) => {
    execFile(process.execPath, [CLI, 'run', ...args], { cwd: ROOT, env: { ...process.env, COUNT_FILE: join(dir, 'calls.txt') } },
      (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr })).stdin.end('');
  });
  const common = ['--quiet', '--no-mcp-json', '--model', `module:${PARTS}#model`, '--pack', PARTS, '--journal', journal];
  const otherArgs = await cli(prompt, '--args', 'stop', ...common);
  assert.equal(otherArgs.code, 2);
  assert.equal(otherArgs.stderr.split('\n')[0], `runvil: the journal '${journal}' is not of this run: it was recorded with the argument string "go", not "stop"; pass --fresh to start over (the log is emptied; the store is left as it is), or give another --journal file`);
  const otherPrompt = join(dir, 'other.md');
  writeFileSync(otherPrompt, PROMPT.replace('arm ', 'ARM '));
  const changed = await cli(otherPrompt, '--args', 'go', ...common);
  assert.equal(changed.code, 2);
  assert.match(changed.stderr, /is not of this run: it was recorded for another prompt; pass --fresh/);
  const fresh = await cli(prompt, '--args', 'stop', '--fresh', ...common);
  assert.equal(fresh.code, 0, fresh.stderr);
  assert.equal(JSON.parse(lines(journal)[0]).args, 'stop');
  const usage = await cli(prompt, '--fresh');
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^runvil: --fresh needs --journal/);
});
