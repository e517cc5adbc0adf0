// runvil run's journal flags as a user runs them: --record writes the journal whatever the
// outcome, --replay needs no model, --journal appends a durable log and resumes from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, appendFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PKG, ROOT } from './helpers.mjs';

const CLI = join(PKG, 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'runvil-cli-journal-'));
const file = (name, text) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const cli = (...args) =>
  new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, stdout, stderr });
    });
    child.stdin.end('');
  });

const prompt = file('steps.md', '# S\n\n## Main\n\n```lua\nlocal a = models.infer("one")\nlocal b = models.infer("two")\nreturn a .. "+" .. b .. " at " .. sys.now\n```\n');
const script = file('replies.json', JSON.stringify(['A', 'B']));

test('--record writes the journal, --replay runs it again with no model', async () => {
  const journal = join(dir, 'run.json');
  const recorded = await cli('run', prompt, '--model-script', script, '--record', journal, '--quiet');
  assert.equal(recorded.code, 0, recorded.stderr);
  assert.match(recorded.stdout, /^A\+B at \d{4}-/);
  const entries = JSON.parse(readFileSync(journal, 'utf8'));
  assert.equal(entries[0].journal, 'runvil-journal');
  assert.equal(entries.at(-1).kind, 'end');
  const replayed = await cli('run', prompt, '--replay', journal, '--quiet');
  assert.deepEqual(replayed, { code: 0, stdout: recorded.stdout, stderr: '' });
  // --json prints the outcome without the journal.
  const json = await cli('run', prompt, '--replay', journal, '--json', '--quiet');
  assert.equal(JSON.parse(json.stdout).journal, undefined);
});

test('--record writes the journal of a failed run too, and its replay fails the same way', async () => {
  const journal = join(dir, 'failed.json');
  const failed = await cli('run', prompt, '--model-script', file('short.json', '["A"]'), '--record', journal, '--quiet');
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /^Model: .*scripted model has no reply left \(1 used\)/);
  const entries = JSON.parse(readFileSync(journal, 'utf8'));
  assert.deepEqual(entries.at(-1).error.kind, 'Model');
  assert.deepEqual(await cli('run', prompt, '--replay', journal, '--quiet'), failed);
});

test('--journal appends a durable log and resumes from it, making only the calls it lacks', async () => {
  const log = join(dir, 'run.jsonl');
  const first = await cli('run', prompt, '--model-script', script, '--journal', log, '--quiet');
  assert.equal(first.code, 0, first.stderr);
  const lines = readFileSync(log, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.at(-1).kind, 'end');
  // A finished log replays: no model is needed.
  assert.deepEqual(await cli('run', prompt, '--journal', log, '--quiet'), first);

  // A log cut after the first answer, its last line torn by the crash: the resumed run makes the
  // one call left (the script holds a single reply) and ends as the whole run did (the clock
  // reading after it is a live one).
  const cut = lines.findIndex((e) => e.kind === 'model' && e.seq === 3);
  const partial = join(dir, 'partial.jsonl');
  writeFileSync(partial, lines.slice(0, cut).map((e) => `${JSON.stringify(e)}\n`).join(''));
  appendFileSync(partial, '{"kind":"mod');
  const resumed = await cli('run', prompt, '--model-script', file('last.json', '["B"]'), '--journal', partial, '--quiet');
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stdout, /^A\+B at \d{4}-/);
  assert.match(resumed.stderr, /ends in a torn line/);
  const after = readFileSync(partial, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(after.map((e) => e.kind ?? 'header'), lines.map((e) => e.kind ?? 'header'));
});

test('a file that is not a journal is a clear error, exit 2', async () => {
  const bad = file('bad.json', '[{"journal":"runvil-journal","version":9}]');
  const run = await cli('run', prompt, '--replay', bad);
  assert.deepEqual(run, { code: 2, stdout: '', stderr: 'runvil: the journal (replay): the journal is version 9; this engine reads version 1\n' });
  const missing = await cli('run', prompt, '--replay', join(dir, 'none.json'));
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^runvil: cannot read the journal '.*none\.json': no such file\n/);
  const both = await cli('run', prompt, '--replay', bad, '--journal', join(dir, 'x.jsonl'));
  assert.equal(both.code, 2);
  assert.match(both.stderr, /^runvil: --replay and --journal cannot be used together\n/);
  assert.equal(existsSync(join(dir, 'x.jsonl')), false);
});
