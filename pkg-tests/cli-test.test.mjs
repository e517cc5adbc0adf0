// runvil test as a user runs it: *.test.json files found under the paths given, each test a fresh
// run checked against its expect (result, error, store, calls), scripted or replayed from a journal,
// a report in a stable order with a diff per failure, and --update re-recording journals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PKG } from './helpers.mjs';

const CLI = join(PKG, 'cli.js');
const root = mkdtempSync(join(tmpdir(), 'runvil-cli-test-'));

/** Writes files (path -> text, or a value written as JSON) under a fresh directory; answers it. */
let made = 0;
function project(files) {
  const dir = join(root, `p${made++}`);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return dir;
}

const cli = (cwd, ...args) =>
  new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, 'test', ...args], { cwd }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, stdout, stderr });
    });
    child.stdin.end('');
  });

/** The report with its timings taken out, so that runs compare. */
const untimed = (text) => text.replace(/\(\d+ ms(, |\))/g, (_, end) => `(ms${end}`);

const lua = (code, frontmatter = '') => `${frontmatter ? `---\n${frontmatter}---\n` : ''}# T\n\n## Main\n\n\`\`\`lua\n${code}\n\`\`\`\n`;
const PROMPTS = {
  'echo.md': lua('return "echo " .. args .. ": " .. models.infer("say")'),
  'fail.md': lua('error("boom")'),
  'write.md': lua('store.write("out.txt", args)\nstore.delete("old.txt")\nreturn nil'),
  'ask.md': lua('return input.ask() .. "+" .. input.ask()', 'uses: [user-input]\n'),
  'roles.md': lua(
    'return models.get("writer"):infer("w") .. "/" .. models.get("critic"):infer("c")',
    'models:\n  writer: {}\n  critic: {}\n',
  ),
  'probe.md': lua(
    'tools.call("probe/look", { q = "a" })\ntools.call("probe/look", { q = "b" })\nreturn "looked"',
    'uses: [probe]\n',
  ),
  'probe.js': `export default { name: 'probe', tools: [{ name: 'look', parameters: { type: 'object' }, call: async (a) => 'saw ' + a.q }] };\n`,
};

test('passing tests of each kind: result, error, store, calls, operator answers, roles', async () => {
  const dir = project({
    ...PROMPTS,
    'a/result.test.json': { prompt: '../echo.md', args: 'hi', replies: ['there'], expect: { result: 'echo hi: there' } },
    'a/error.test.json': { prompt: '../fail.md', expect: { error: { kind: 'Lua', contains: 'boom' } } },
    'b/store.test.json': {
      prompt: '../write.md',
      args: 'new text',
      store: { 'old.txt': 'x', 'kept.txt': 'k' },
      expect: { result: null, store: { 'out.txt': 'new text', 'old.txt': null, 'kept.txt': 'k' } },
    },
    'b/ask.test.json': { prompt: '../ask.md', answers: ['one', 'two'], expect: { result: 'one+two', calls: ['user-input/ask', 'user-input/ask'] } },
    'b/roles.test.json': { prompt: '../roles.md', replies: { writer: ['W'], critic: ['C'] }, expect: { result: 'W/C' } },
    'c/probe.test.json': { prompt: '../probe.md', packs: ['../probe.js'], expect: { result: 'looked', calls: ['probe/look', 'probe/look'] } },
  });
  const { code, stdout, stderr } = await cli(dir);
  assert.equal(code, 0, stdout + stderr);
  assert.equal(
    untimed(stdout),
    [
      'ok   a/error (ms)',
      'ok   a/result (ms)',
      'ok   b/ask (ms)',
      'ok   b/roles (ms)',
      'ok   b/store (ms)',
      'ok   c/probe (ms)',
      '',
      '6 passed, 0 failed',
      '',
    ].join('\n'),
  );
});

test('failing tests print a readable diff of what differs', async () => {
  const dir = project({
    ...PROMPTS,
    'result.test.json': {
      prompt: 'echo.md',
      args: 'hi',
      replies: ['line one\nline two\nline three'],
      expect: { result: 'echo hi: line one\nline 2\nline three' },
    },
    'null.test.json': { prompt: 'echo.md', replies: ['x'], expect: { result: null } },
    'error.test.json': { prompt: 'fail.md', expect: { error: { kind: 'Model', contains: 'bang' } } },
    'ok-not-error.test.json': { prompt: 'echo.md', replies: ['x'], expect: { error: { kind: 'Lua' } } },
    'error-not-ok.test.json': { prompt: 'fail.md', expect: { result: 'fine' } },
    'store.test.json': {
      prompt: 'write.md',
      args: 'actual\ntext',
      store: { 'old.txt': 'x' },
      expect: { result: null, store: { 'out.txt': 'expected\ntext', 'old.txt': 'x', 'gone.txt': null, 'new.txt': 'n' } },
    },
    'calls.test.json': { prompt: 'probe.md', packs: ['probe.js'], expect: { result: 'looked', calls: ['probe/look', 'web/fetch'] } },
    'out-of-replies.test.json': { prompt: 'echo.md', replies: [], expect: { result: 'echo : x' } },
  });
  const { code, stdout } = await cli(dir);
  assert.equal(code, 1, stdout);
  const report = untimed(stdout);
  assert.match(report, /^FAIL calls \(ms\)\nFAIL error-not-ok \(ms\)\nFAIL error \(ms\)\nFAIL null \(ms\)\nFAIL ok-not-error \(ms\)\nFAIL out-of-replies \(ms\)\nFAIL result \(ms\)\nFAIL store \(ms\)\n/);
  assert.ok(
    report.includes(
      [
        'FAIL result',
        '  the result differs (- expected, + actual)',
        '      echo hi: line one',
        '    - line 2',
        '    + line two',
        '      line three',
      ].join('\n'),
    ),
    report,
  );
  assert.ok(report.includes('FAIL null\n  expected no result (null), got a result\n    actual:\n      echo : x\n'), report);
  assert.ok(
    report.includes('FAIL error\n  expected an error with kind Model and a message containing "bang", got Lua: ## Main:6: boom (line 6, ## Main)\n'),
    report,
  );
  assert.ok(report.includes('FAIL ok-not-error\n  expected the run to fail, it succeeded\n    result:\n      echo : x\n'), report);
  assert.ok(report.includes('FAIL error-not-ok\n  expected a result, the run failed: Lua: ## Main:6: boom (line 6, ## Main)\n'), report);
  assert.ok(
    report.includes(
      [
        'FAIL store',
        "  store file 'out.txt' differs (- expected, + actual)",
        '    - expected',
        '    + actual',
        '      text',
        "  store file 'old.txt' is missing",
        '    expected:',
        '      x',
        "  store file 'new.txt' is missing",
        '    expected:',
        '      n',
      ].join('\n'),
    ),
    report,
  );
  assert.ok(report.includes('FAIL calls\n  the tool calls differ (missing: web/fetch; unexpected: probe/look)\n'), report);
  assert.match(report, /FAIL out-of-replies\n  expected a result, the run failed: Model: .*scripted model has no reply left \(0 used\)/);
  assert.match(report, /\n0 passed, 8 failed\n$/);
});

test('a store file that should not exist, and trailing blanks, are shown as such', async () => {
  const dir = project({
    ...PROMPTS,
    'gone.test.json': { prompt: 'write.md', args: 'x', expect: { result: null, store: { 'out.txt': null } } },
    'blank.test.json': { prompt: 'echo.md', args: 'a', replies: ['b  '], expect: { result: 'echo a: b' } },
    'newline.test.json': { prompt: 'echo.md', args: 'a', replies: ['b'], expect: { result: 'echo a: b\n' } },
  });
  const { code, stdout } = await cli(dir);
  assert.equal(code, 1);
  assert.ok(stdout.includes("FAIL gone\n  store file 'out.txt' should not exist\n    actual:\n      x\n"), stdout);
  assert.ok(stdout.includes('    - echo a: b\n    + echo a: b··\n'), stdout);
  assert.ok(stdout.includes('FAIL newline\n  the result differs only in a final newline (the expected text ends with one)\n'), stdout);
});

test('a malformed test file fails that test with a precise message; the others still run', async () => {
  const dir = project({
    ...PROMPTS,
    'good.test.json': { prompt: 'echo.md', replies: ['x'], expect: { result: 'echo : x' } },
    'not-json.test.json': '{ "prompt": ',
    'array.test.json': [{ prompt: 'echo.md' }],
    'typo.test.json': { prompt: 'echo.md', expects: { result: 'x' } },
    'type.test.json': { prompt: 'echo.md', args: 3, expect: { result: 'x' } },
    'deep.test.json': { prompt: 'echo.md', expect: { error: { kind: 'Lua', contain: 'x' } } },
    'both.test.json': { prompt: 'echo.md', replies: [], journal: 'j.json', expect: { result: 'x' } },
    'noexpect.test.json': { prompt: 'echo.md' },
    'store-type.test.json': { prompt: 'echo.md', store: { 'a.txt': 1 }, expect: { result: 'x' } },
    'missing-prompt.test.json': { prompt: 'nowhere.md', expect: { result: 'x' } },
    'missing-journal.test.json': { prompt: 'echo.md', journal: 'none.json', expect: { result: 'x' } },
    'bad-journal.test.json': { prompt: 'echo.md', journal: 'bad.json', expect: { result: 'x' } },
    'bad.json': '[{"journal":"something else"}]',
    'bad-pack.test.json': { prompt: 'probe.md', packs: ['nopack.js'], expect: { result: 'x' } },
    'nopack.js': 'export const x = 1;\n',
    'throwing-pack.test.json': { prompt: 'probe.md', packs: ['throws.js'], expect: { result: 'x' } },
    'throws.js': 'export default () => { throw new Error("no key"); };\n',
    'many.test.json': {
      prompt: 'echo.md',
      replies: ['x'],
      tests: [
        { name: 'fine', expect: { result: 'echo : x' } },
        { name: 'fine', expect: { result: 'echo : x' } },
        { expect: { result: 'x' } },
        { name: 'wrong', seed: -1, expect: { result: 'x' } },
      ],
    },
  });
  const { code, stdout } = await cli(dir);
  assert.equal(code, 1, stdout);
  const failure = (label) => new RegExp(`\\nFAIL ${label}\\n  (.*)\\n`).exec(stdout)?.[1];
  assert.match(failure('not-json'), /^not-json\.test\.json: not JSON: /);
  assert.equal(failure('array'), 'array.test.json: a test file is one test object or { "tests": [...] } (got an array; put it under "tests")');
  assert.match(failure('typo'), /^typo\.test\.json: unknown key 'expects' \(did you mean 'expect'\?\); known keys: name, prompt, /);
  assert.equal(failure('type'), 'type.test.json: args: must be a string (got a number)');
  assert.equal(failure('deep'), "deep.test.json: expect.error: unknown key 'contain' (did you mean 'contains'?); known keys: kind, contains");
  assert.equal(failure('both'), 'both.test.json: takes replies or journal, not both');
  assert.equal(failure('noexpect'), 'noexpect.test.json: needs expect');
  assert.equal(failure('store-type'), "store-type.test.json: store['a.txt']: must be the file's text (got a number)");
  assert.equal(failure('missing-prompt'), "prompt: cannot read 'nowhere.md': no such file");
  assert.equal(failure('missing-journal'), "journal: 'none.json' does not exist (record it with runvil test --update --model SPEC)");
  assert.match(failure('bad-journal'), /^journal 'bad\.json': entry 0 is not a journal header/);
  assert.equal(failure('bad-pack'), "the module 'nopack.js' exports no Pack");
  assert.equal(failure('throwing-pack'), "the Pack module 'throws.js' failed making its Packs: no key");
  assert.equal(failure('many/#2'), "many.test.json: tests[1].name: 'fine' names an earlier test too");
  assert.equal(failure('many/#3'), 'many.test.json: tests[2].name: needs a non-empty string name');
  assert.equal(failure('many/wrong'), 'many.test.json: tests[3].seed: must be a non-negative integer or a decimal string (got -1)');
  assert.match(stdout, /\nok   good \(\d+ ms\)\n/);
  assert.match(stdout, /\nok   many\/fine \(\d+ ms\)\n/);
  assert.match(stdout, /\n2 passed, 16 failed\n$/);
});

test('journal tests replay a recorded run; --update re-records it from the live --model', async () => {
  const dir = project({
    ...PROMPTS,
    'replies.json': ['live one'],
    't/echo.test.json': { prompt: '../echo.md', args: 'hi', journal: 'echo.journal.json', expect: { result: 'echo hi: live one' } },
    't/store.test.json': {
      prompt: '../write.md',
      args: 'v',
      journal: 'write.journal.json',
      store: { 'old.txt': 'o' },
      expect: { result: null, store: { 'out.txt': 'v', 'old.txt': null } },
    },
  });
  const journal = join(dir, 't/echo.journal.json');
  const before = await cli(dir);
  assert.equal(before.code, 1);
  assert.match(before.stdout, /journal: 't\/echo\.journal\.json' does not exist/);

  const updated = await cli(dir, '--update', '--model', 'script:replies.json');
  assert.equal(updated.code, 0, updated.stdout + updated.stderr);
  assert.match(updated.stdout, /^ok   t\/echo \(\d+ ms, journal recorded\)\nok   t\/store \(\d+ ms, journal recorded\)\n/);
  const entries = JSON.parse(readFileSync(journal, 'utf8'));
  assert.equal(entries[0].journal, 'runvil-journal');
  assert.equal(entries[0].seed, '0');
  assert.equal(entries.find((e) => e.kind === 'model').reply.content, 'live one');

  // The replay needs no model, and gives the recorded outcome and store changes.
  const replayed = await cli(dir);
  assert.equal(replayed.code, 0, replayed.stdout);
  assert.match(replayed.stdout, /^ok   t\/echo \(\d+ ms\)\nok   t\/store \(\d+ ms\)\n/);

  // A prompt that changed since the recording fails its replay, saying where.
  writeFileSync(join(dir, 'echo.md'), PROMPTS['echo.md'].replace('"echo "', '"ECHO "'));
  const changed = await cli(dir, 't/echo.test.json');
  assert.equal(changed.code, 1);
  assert.match(changed.stdout, /FAIL t\/echo\n  expected a result, the run failed: Determinism: the prompt is not the one the journal recorded: section 'Main' changed/);

  // A test whose seed is not the recorded one fails its replay, saying so.
  writeFileSync(join(dir, 't/seeded.test.json'), JSON.stringify({ prompt: '../write.md', seed: 5, journal: 'write.journal.json', expect: { result: null } }));
  const seeded = await cli(dir, 't/seeded.test.json');
  assert.match(seeded.stdout, /FAIL t\/seeded\n  expected a result, the run failed: Determinism: the run's seed 5 is not the one the journal recorded, 0/);

  // --update replaces a journal that is not one.
  const broken = join(dir, 't/write.journal.json');
  writeFileSync(broken, '[ not json');
  assert.equal((await cli(dir, 't/store.test.json')).code, 1);
  const mended = await cli(dir, '--update', '--model', 'script:replies.json', 't/store.test.json');
  assert.equal(mended.code, 0, mended.stdout);
  assert.equal(JSON.parse(readFileSync(broken, 'utf8'))[0].journal, 'runvil-journal');

  // A re-recording that misses expect keeps the old journal.
  const old = readFileSync(journal, 'utf8');
  const missed = await cli(dir, '--update', '--model', 'script:replies.json', 't/echo.test.json');
  assert.equal(missed.code, 1);
  assert.match(missed.stdout, /^FAIL t\/echo \(\d+ ms, journal not updated\)\n/);
  assert.match(missed.stdout, /- echo hi: live one\n {4}\+ ECHO hi: live one\n/);
  assert.equal(readFileSync(journal, 'utf8'), old);
});

test('--update re-records with the test seed and the roles --model names', async () => {
  const dir = project({
    ...PROMPTS,
    'w.json': ['W'],
    'c.json': ['C'],
    'roles.test.json': { prompt: 'roles.md', seed: 42, journal: 'roles.journal.json', expect: { result: 'W/C' } },
  });
  const updated = await cli(dir, '--update', '--model', 'writer=script:w.json', '--model', 'critic=script:c.json');
  assert.equal(updated.code, 0, updated.stdout + updated.stderr);
  assert.equal(JSON.parse(readFileSync(join(dir, 'roles.journal.json'), 'utf8'))[0].seed, '42');
  assert.equal((await cli(dir)).code, 0);
});

test('usage errors and no test file exit 2', async () => {
  const dir = project({ ...PROMPTS, 'node_modules/x/a.test.json': '{}', '.hidden/b.test.json': '{}' });
  const none = await cli(dir);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /^runvil test: no test files \(\*\.test\.json\) under \.\n/);
  const cases = [
    [['nowhere'], /cannot read 'nowhere': no such file or directory/],
    [['--update'], /--update needs --model/],
    [['--model', 'script:x.json'], /--model is only for --update/],
    [['--jobs', '0'], /--jobs must be a positive integer \(got '0'\)/],
    [['--format', 'xml'], /--format must be text or json/],
    [['--bogus'], /Unknown option '--bogus'/],
    [['--update', '--model', 'gpt'], /^runvil test: --model must be \[ROLE=\]openai:<model>, .* \(got 'gpt'\)\nusage: runvil test/],
  ];
  for (const [args, message] of cases) {
    const { code, stderr } = await cli(dir, ...args);
    assert.equal(code, 2, args.join(' '));
    assert.match(stderr, message);
  }
  const help = await cli(dir, '--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^usage: runvil test/);
});

test('a file or directory named explicitly is run even where a search would skip it, and once', async () => {
  const dir = project({ ...PROMPTS, '.hidden/a.test.json': { prompt: '../echo.md', replies: ['x'], expect: { result: 'echo : x' } } });
  const { code, stdout } = await cli(dir, '.hidden/a.test.json', './.hidden/a.test.json', '.hidden');
  assert.equal(code, 0, stdout);
  assert.match(stdout, /^ok   \.hidden\/a \(\d+ ms\)\n\n1 passed, 0 failed\n$/);
});

test('concurrent tests report in the same stable order as one at a time', async () => {
  const files = { ...PROMPTS };
  for (let i = 0; i < 12; i++) {
    // Tests of different lengths, so that they finish out of order when run at once.
    const loops = (12 - i) * 20000;
    files[`slow${i}.md`] = lua(`local n = 0\nfor i = 1, ${loops} do n = n + 1 end\nreturn "${i}:" .. n`);
    files[`t${String(i).padStart(2, '0')}.test.json`] = { prompt: `slow${i}.md`, expect: { result: i % 3 ? `${i}:${loops}` : 'no' } };
  }
  const dir = project(files);
  const serial = await cli(dir, '--jobs', '1');
  const parallel = await cli(dir, '--jobs', '6');
  assert.equal(serial.code, 1);
  assert.equal(parallel.code, 1);
  assert.equal(untimed(parallel.stdout), untimed(serial.stdout));
  assert.match(serial.stdout, /\n8 passed, 4 failed\n$/);
});

test('--format json reports every test and its problems', async () => {
  const dir = project({
    ...PROMPTS,
    'a.test.json': { prompt: 'echo.md', replies: ['x'], expect: { result: 'echo : x' } },
    'b.test.json': { prompt: 'echo.md', replies: ['y'], expect: { result: 'echo : x', calls: ['probe/look'] } },
  });
  const { code, stdout } = await cli(dir, '--format', 'json');
  assert.equal(code, 1);
  const report = JSON.parse(stdout);
  assert.equal(report.passed, 1);
  assert.equal(report.failed, 1);
  assert.deepEqual(
    report.tests.map((t) => [t.name, t.file, t.ok, typeof t.ms]),
    [
      ['a', 'a.test.json', true, 'number'],
      ['b', 'b.test.json', false, 'number'],
    ],
  );
  assert.deepEqual(report.tests[1].problems, [
    {
      kind: 'result',
      message: 'the result differs (- expected, + actual)',
      expected: 'echo : x',
      actual: 'echo : y',
      diff: ['- echo : x', '+ echo : y'],
    },
    {
      kind: 'calls',
      message: 'the tool calls differ (missing: probe/look)',
      expected: ['probe/look'],
      actual: [],
    },
  ]);
  assert.ok(!existsSync(join(dir, 'a.journal.json')));
});
