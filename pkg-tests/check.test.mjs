// engine.check against the built package: every static error at once, each with the run's own
// message, nothing run; and `runvil check` on the command line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { createEngine } from '../pkg/index.js';
import { CHECK_USAGE } from '../pkg/cli/check.js';
import { PKG, ROOT } from './helpers.mjs';

const engine = await createEngine();

/** The five-error prompt; each error switched on or off without moving a line. */
function five({ frontmatter = false, placeholder = false, call = false, syntax = false, fence = false } = {}) {
  return [
    '---',
    frontmatter ? 'nmae: x' : 'name: x',
    '---',
    '# T',
    '',
    '## Main',
    '',
    placeholder ? 'Say {{ var. x }}.' : 'Say {{ args }}.',
    '',
    '```lua',
    call ? 'local r = call("## Hepler")' : 'local r = call("## Helper")',
    'return prose .. tostring(r)',
    '```',
    '',
    '## Helper',
    '',
    '```lua',
    syntax ? 'local = 1' : 'local y = 1',
    "return 'x'",
    '```',
    '',
    '```text',
    fence ? 'notes' : '```',
    '',
  ].join('\n');
}

const ALL = { frontmatter: true, placeholder: true, call: true, syntax: true, fence: true };

test('five errors in one pass, in source order, each with the message the run gives it', async () => {
  const clean = await engine.run(five());
  assert.deepEqual([clean.ok, clean.result], [true, 'Say .x']);
  const found = await engine.check(five(ALL));
  assert.deepEqual(
    found.map((d) => [d.severity, d.kind, d.line, d.column, d.section]),
    [
      ['error', 'Frontmatter', 2, 1, null],
      ['error', 'Lua', 8, 5, '## Main'],
      ['error', 'Lua', 11, 16, '## Main'],
      ['error', 'Lua', 18, 1, '## Helper'],
      ['error', 'Parse', 22, 1, null],
    ],
  );
  const singles = ['frontmatter', 'placeholder', 'call', 'syntax', 'fence'];
  for (const [i, name] of singles.entries()) {
    const source = five({ [name]: true });
    const outcome = await engine.run(source);
    assert.equal(outcome.ok, false, name);
    assert.equal(found[i].kind, outcome.error.kind, name);
    assert.equal(found[i].message, outcome.error.message, name);
    assert.deepEqual(await engine.check(source), [found[i]], name);
  }
});

test('every example is clean', async () => {
  const dir = join(ROOT, 'examples');
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.md') && n !== 'README.md')) {
    assert.deepEqual(await engine.check(readFileSync(join(dir, name), 'utf8')), [], name);
  }
});

test('check never runs a block: a loop forever and a model call return at once', async () => {
  let called = 0;
  const models = { default: async () => (called++, { content: 'x' }) };
  const source = '# T\n\n```lua\nwhile true do end\n```\n\n## A\n\n```lua\nreturn models.infer("hi")\n```\n';
  const started = Date.now();
  assert.deepEqual(await engine.check(source), []);
  assert.ok(Date.now() - started < 2000);
  assert.equal(called, 0);
  void models;
});

test('uses: is checked against the packs given, with the run message', async () => {
  const source = '---\nname: x\nuses: [web]\n---\n# T\n';
  assert.deepEqual(await engine.check(source), []);
  const [d] = await engine.check(source, { packs: [] });
  const outcome = await engine.run(source, { packs: [] });
  assert.deepEqual([d.kind, d.message, d.line], [outcome.error.kind, outcome.error.message, 3]);
  const web = { name: 'web', tools: [] };
  assert.deepEqual(await engine.check(source, { packs: [web] }), []);
});

test('misuse is a TypeError', async () => {
  await assert.rejects(engine.check(42), { name: 'TypeError', message: /engine\.check: source must be a string/ });
  await assert.rejects(engine.check('', 'x'), { name: 'TypeError', message: /options must be an object/ });
  await assert.rejects(engine.check('', { pack: [] }), { name: 'TypeError', message: /unknown option 'pack'/ });
  await assert.rejects(engine.check('', { packs: {} }), { name: 'TypeError', message: /packs must be an array/ });
  await assert.rejects(engine.check('', { packs: [{}] }), { name: 'TypeError', message: /packs\[0\] must be a Pack/ });
  const hostile = new Proxy(
    {},
    {
      ownKeys: () => {
        throw new Error('boom');
      },
    },
  );
  await assert.rejects(engine.check('', hostile), { name: 'TypeError', message: /could not be read/ });
});

test('runvil check: a usage error says what is wrong, then the usage, and exits 2; --help prints the usage', () => {
  const cli = (...args) => spawnSync(process.execPath, [join(PKG, 'cli.js'), 'check', ...args], { encoding: 'utf8' });
  const missing = join(tmpdir(), 'runvil-check-missing.md');
  const cases = [
    [[], /^missing prompt file$/],
    [['--format', 'xml', missing], /^--format must be text or json \(got 'xml'\)$/],
    [['--bogus', missing], /^Unknown option '--bogus'/],
    [[missing], new RegExp(`^cannot read prompt '${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}': ENOENT`)],
  ];
  for (const [args, message] of cases) {
    const r = cli(...args);
    assert.equal(r.status, 2, args.join(' '));
    assert.equal(r.stdout, '');
    const [first, ...rest] = r.stderr.split('\n');
    assert.match(first, /^runvil check: /, args.join(' '));
    assert.match(first.slice('runvil check: '.length), message);
    assert.equal(rest.join('\n'), `${CHECK_USAGE}\n`);
  }
  for (const flag of ['--help', '-h']) {
    const help = cli(flag);
    assert.deepEqual([help.status, help.stdout, help.stderr], [0, `${CHECK_USAGE}\n`, '']);
  }
});

test('runvil check: text lines, JSON, exit status', () => {
  const dir = mkdtempSync(join(tmpdir(), 'runvil-check-'));
  const bad = join(dir, 'bad.md');
  const good = join(dir, 'good.md');
  writeFileSync(bad, five(ALL));
  writeFileSync(good, five());
  const cli = (...args) => spawnSync(process.execPath, [join(PKG, 'cli.js'), 'check', ...args], { encoding: 'utf8' });
  const text = cli(bad, good);
  assert.equal(text.status, 1);
  const lines = text.stdout.trim().split('\n');
  assert.equal(lines.length, 5);
  assert.match(
    lines[0],
    new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2:1: error: invalid frontmatter: unknown key \`nmae\``),
  );
  assert.match(lines[2], /:11:16: error: call: no section "## Hepler" is visible from here/);
  const json = cli('--format', 'json', bad);
  assert.equal(json.status, 1);
  const parsed = JSON.parse(json.stdout);
  assert.deepEqual(Object.keys(parsed[0]), ['file', 'severity', 'kind', 'message', 'line', 'column', 'section']);
  assert.equal(parsed[0].file, bad);
  assert.equal(cli(good).status, 0);
  const warned = join(dir, 'warn.md');
  writeFileSync(warned, '# T\n\n## A\n\n{{ var }}\n\n```lua\nreturn 1\n```\n');
  const warning = cli(warned);
  assert.equal(warning.status, 0);
  assert.match(warning.stdout, /:5:1: warning: bad path: \{\{ var \}\}/);
  assert.equal(cli().status, 2);
  assert.equal(cli('--format', 'xml', good).status, 2);
  assert.equal(cli(join(dir, 'missing.md')).status, 2);
  const packs = join(dir, 'packs.mjs');
  writeFileSync(packs, "export default { name: 'acme/tools', tools: [] };\n");
  const declared = join(dir, 'declared.md');
  writeFileSync(declared, '---\nuses: [user-input, acme/tools, acme/other]\n---\n# T\n');
  assert.equal(cli(declared).status, 0);
  const checked = cli('--pack', packs, declared);
  assert.equal(checked.status, 1);
  assert.match(
    checked.stdout,
    /:2:1: error: the environment cannot satisfy this prompt:\n- other is unavailable: acme\/other is not installed\n$/,
  );
});
