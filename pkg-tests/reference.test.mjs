// docs/reference.md against the engine: every global and field a section VM really has must be
// documented there, and every name the page documents must exist (or, for a name it marks
// `(not available)`, raise the not-available error). One run of the built package: a fanout arm
// (so `item` and `sys.index` exist) asks a scripted model, which calls a local tool (so `sys.model`,
// `tools.calls` and every kind of message record exist), makes one of each Engine object, then
// reports what it finds.
//
// What the engine has is found two ways. Tables that enumerate give their keys (`pairs`). Sealed
// tables and userdata (`sys`, `tasks`, `messages`, Tool objects, ...) cannot be walked, so every
// word of the engine's source (`src/`, any layout) and of the page is tried as a field name on them;
// a field the engine answers for is named somewhere in its source, so a new one is found too.
// Engine globals that load on first read are found the same way, through `_G`.
//
// The page's convention (its top says so): a heading of level 2 or deeper that starts with a code
// span declares the name in it (`### \`store.write(path, contents)\``; `messages:user` is
// `messages.user`); a heading ending in `(not available)` declares a name that must raise; a
// paragraph starting `Lua's own:` or `Removed:` lists names present or absent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngine, scriptedModel } from '../pkg/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC = 'docs/reference.md';

/** The names docs/reference.md declares: { present, unavailable, removed } (Sets of dotted names). */
function parseReference(text) {
  const lines = [];
  let fence = null;
  for (const l of text.split('\n')) {
    const f = l.match(/^\s*(`{3,}|~{3,})/);
    if (fence) {
      if (f && f[1][0] === fence[0] && f[1].length >= fence.length && /^\s*[`~]+\s*$/.test(l)) fence = null;
      continue;
    }
    if (f && !/^\s*`{3,}[^`]*`/.test(l)) {
      fence = f[1];
      continue;
    }
    lines.push(l);
  }
  const present = new Set();
  const unavailable = new Set();
  const removed = new Set();
  const nameOf = (span) => {
    const m = span.match(/^[A-Za-z_]\w*(?:[.:][A-Za-z_]\w*)*/);
    assert.ok(m, `${DOC}: the heading code span \`${span}\` does not start with a name`);
    return m[0].replace(/:/g, '.');
  };
  for (let i = 0; i < lines.length; i++) {
    const h = lines[i].match(/^#{2,6}\s+`([^`]+)`(.*)$/);
    if (h) {
      const name = nameOf(h[1]);
      const into = /\(not available\)\s*$/.test(h[2]) ? unavailable : present;
      assert.ok(!present.has(name) && !unavailable.has(name), `${DOC} declares ${name} twice`);
      into.add(name);
      continue;
    }
    const list = lines[i].match(/^(Lua's own|Removed):/);
    if (!list) continue;
    let para = lines[i].slice(list[0].length);
    while (i + 1 < lines.length && lines[i + 1].trim() !== '' && !/^#/.test(lines[i + 1])) para += ' ' + lines[++i];
    for (const m of para.matchAll(/`([^`]+)`/g)) {
      const name = nameOf(m[1]);
      (list[1] === 'Removed' ? removed : present).add(name);
    }
  }
  return { present, unavailable, removed };
}

/** Every lowercase word of the engine's source: the names the probe tries on what cannot be walked. */
function sourceWords() {
  const words = new Set();
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(rs|lua)$/.test(e.name)) for (const w of readFileSync(p, 'utf8').match(/[a-z_][a-z0-9_]*/g) ?? []) words.add(w);
    }
  };
  walk(join(ROOT, 'src'));
  return words;
}

// The values the page documents under a name that is not a global, and how the probe reaches them.
// Each is a Lua expression list over the probe's locals; the fields found on any of them count.
const OBJECTS = {
  err: 'errs',
  record: 'records',
  model: '{ models.get("default") }',
  tool: '{ tools.get("probe/echo") }',
  pack: '{ packs.get("probe") }',
  task: '{ spawned }',
  result: 'results',
};
// Globals whose fields are walked: enumerable ones by pairs, the rest by trying names.
const TABLES = ['json', 'store', 'sys', 'ui', 'prompt', 'messages', 'models', 'tools', 'packs', 'tasks', 'compactors',
  'string', 'table', 'math', 'utf8'];
// Sealed tables where any name reads as a function that raises `... is not available`: only
// their real fields (pairs) count, and a documented `(not available)` name must raise.
const UNAVAILABLE_ANSWERS_ALL = new Set(['models', 'compactors']);

function probeSource(words, unavailable) {
  const list = [...words].sort().join(' ');
  const objects = Object.entries(OBJECTS).map(([k, v]) => `${k} = ${v}`).join(',\n    ');
  const unavail = [...unavailable].map((n) => `"${n}"`).join(', ');
  const lua = String.raw`
local WORDS = {}
for w in ([==[${list}]==]):gmatch('%S+') do WORDS[#WORDS + 1] = w end
local function get(o, k) return o[k] end
local function found(values, walk, try)
  local seen = {}
  for _, o in ipairs(values) do
    if walk then for k in pairs(o) do if type(k) == 'string' then seen[k] = true end end end
    if try then
      for _, k in ipairs(WORDS) do
        if not seen[k] then
          local ok, v = pcall(get, o, k)
          if ok and v ~= nil then seen[k] = true end
        end
      end
    end
  end
  local out = {}
  for k in pairs(seen) do out[#out + 1] = k end
  table.sort(out)
  return json.array(table.unpack(out))
end

-- Everything the page describes, made to exist: a model round with a local tool call, a catalog
-- offer, tasks that finish, fail and are still running, a fanout's result, store and tool errors.
tools.offer_local('probe_tool', 'Probe.', { x = 'string' }, function() return 'ok' end)
tools.offer('probe/echo')
messages:user('probe')
models.loop()
local records = {}
for i = 1, #messages do records[i] = messages[i] end
local spawned = tasks.spawn('#### Child')
local results = { tasks.join({ spawned })[1] }
results[#results + 1] = tasks.join({ tasks.spawn('#### Slow') }, { timeout_ms = 0 })[1]
results[#results + 1] = tasks.join({ tasks.spawn('#### Fail') })[1]
results[#results + 1] = tasks.fanout('#### Child', { 'x' })[1]
store.write('probe.txt', 'aa')
local errs = {}
for _, f in ipairs({
  function() store.read('missing.txt') end,
  function() store.read('/absolute') end,
  function() store.str_replace('probe.txt', 'a', 'b') end,
  function() tools.call('nope/nope') end,
}) do
  local ok, e = pcall(f)
  errs[#errs + 1] = e
end

local report = { globals = found({ _G }, true, true), fields = {}, unavailable = {} }
local walk_only = { ${[...UNAVAILABLE_ANSWERS_ALL].map((t) => `${t} = true`).join(', ')} }
for _, name in ipairs({ ${TABLES.map((t) => `"${t}"`).join(', ')} }) do
  local t = _G[name]
  report.fields[name] = found({ t }, type(t) == 'table', not walk_only[name])
end
local objects = {
    ${objects},
}
for name, values in pairs(objects) do
  local walk = type(values[1]) == 'table'
  report.fields[name] = found(values, walk, true)
end
for _, name in ipairs({ ${unavail} }) do
  local root, field = name:match('^([^.]+)%.(.+)$')
  local ok, e = pcall(function() return _G[root][field]() end)
  report.unavailable[name] = ok and 'returned' or tostring(e)
end
return json.encode(report)
`;
  return [
    '---',
    'name: reference-probe',
    'description: Walks what a section VM has.',
    'uses: [probe]',
    '---',
    '# Reference probe',
    '',
    '## Main',
    '',
    '```lua',
    "local r = tasks.fanout('### Arm', { 'member' })[1]",
    'if not r.ok then error(r.error) end',
    'return r.text',
    '```',
    '',
    '### Arm',
    '',
    '```lua',
    lua,
    '```',
    '',
    '#### Child',
    '',
    '```lua',
    "return 'child'",
    '```',
    '',
    '#### Slow',
    '',
    '```lua',
    "return tools.call('probe/wait')",
    '```',
    '',
    '#### Fail',
    '',
    '```lua',
    "error('failed on purpose', 0)",
    '```',
    '',
  ].join('\n');
}

const PROBE_PACK = {
  name: 'probe',
  description: 'The reference probe.',
  tools: [
    { name: 'echo', description: 'Echo.', parameters: { type: 'object', properties: {} }, trust: 'trusted', call: () => 'echo' },
    // Keeps a task running past a `tasks.join` with `timeout_ms = 0` (its result has `running`).
    {
      name: 'wait', description: 'Waits.', parameters: { type: 'object', properties: {} }, trust: 'trusted',
      call: () => new Promise((resolve) => setTimeout(() => resolve('waited'), 50)),
    },
  ],
};

/** Names in `want` missing from `have`, and the other way round. */
function diff(have, want) {
  return { missing: [...want].filter((n) => !have.has(n)).sort(), extra: [...have].filter((n) => !want.has(n)).sort() };
}

test('docs/reference.md names exactly the globals and fields a section VM has', async () => {
  const doc = parseReference(readFileSync(join(ROOT, DOC), 'utf8'));
  const words = sourceWords();
  for (const n of [...doc.present, ...doc.unavailable, ...doc.removed]) for (const w of n.split('.')) words.add(w);

  const engine = await createEngine();
  const outcome = await engine.run(probeSource(words, doc.unavailable), {
    seed: 1,
    packs: [PROBE_PACK],
    limits: { instructions: 500_000_000 },
    models: {
      default: scriptedModel([
        { content: '', tool_calls: [{ id: 'call-1', name: 'probe_tool', arguments: { x: 'a' } }], finish_reason: 'tool_calls' },
        'done',
      ]),
    },
  });
  assert.ok(outcome.ok, `the probe prompt failed: ${outcome.error?.kind}: ${outcome.error?.message}`);
  const report = JSON.parse(outcome.result);

  const problems = [];
  const byRoot = new Map();
  const docGlobals = new Set();
  for (const name of doc.present) {
    const [root, field, ...deeper] = name.split('.');
    if (deeper.length) problems.push(`${name}: the test checks one level of fields; extend it`);
    if (field === undefined) docGlobals.add(root);
    else {
      if (!byRoot.has(root)) byRoot.set(root, new Set());
      byRoot.get(root).add(field);
    }
  }

  // Globals: both directions.
  const globals = new Set(report.globals);
  const g = diff(globals, docGlobals);
  for (const n of g.missing) problems.push(`${DOC} documents the global ${n}, which a section VM does not have`);
  for (const n of g.extra) problems.push(`the global ${n} exists in a section VM but ${DOC} does not document it`);

  // Fields of every table and object the probe walked, both directions.
  for (const [root, fields] of Object.entries(report.fields)) {
    const have = new Set(fields);
    const want = byRoot.get(root) ?? new Set();
    const d = diff(have, want);
    for (const n of d.missing) problems.push(`${DOC} documents ${root}.${n}, which the engine does not have`);
    for (const n of d.extra) problems.push(`${root}.${n} exists but ${DOC} does not document it`);
  }
  for (const root of byRoot.keys()) {
    if (!(root in report.fields)) problems.push(`${DOC} documents fields of ${root}, which the test does not probe (add it to TABLES or OBJECTS)`);
  }
  for (const t of Object.keys(report.fields)) {
    if (TABLES.includes(t) && !docGlobals.has(t)) problems.push(`${t} is probed but not documented as a global`);
  }

  // Names documented as not available: not a real field, and calling one raises the not-available error.
  for (const name of doc.unavailable) {
    const [root, field] = name.split('.');
    if (report.fields[root]?.includes(field)) problems.push(`${name} is marked (not available) but the engine has it`);
    const raised = report.unavailable[name];
    if (raised !== `${name} is not available in this version of Runvil`) problems.push(`${name} is marked (not available) but calling it gave: ${raised}`);
  }

  // Removed names: absent, and not also documented as present.
  for (const name of doc.removed) {
    const [root, field] = name.split('.');
    const there = field === undefined ? globals.has(root) : report.fields[root]?.includes(field);
    if (there) problems.push(`${DOC} lists ${name} as removed, but a section VM has it`);
    if (doc.present.has(name)) problems.push(`${DOC} lists ${name} both as present and as removed`);
  }

  assert.deepEqual(problems, []);
});

test('the convention parser reads headings, not-available marks and name lists', () => {
  const doc = parseReference([
    '# Title',
    '## `store`',
    '### `store.write(path, contents)`',
    '### `messages:user(text)`',
    '### `models.compact()` (not available)',
    '```lua',
    '### `inside.a_fence()`',
    '```',
    "Lua's own: `assert`, `string.byte`,",
    '`string.char`',
    '',
    'Removed: `print`, `string.dump`',
  ].join('\n'));
  assert.deepEqual([...doc.present].sort(), ['assert', 'messages.user', 'store', 'store.write', 'string.byte', 'string.char']);
  assert.deepEqual([...doc.unavailable], ['models.compact']);
  assert.deepEqual([...doc.removed], ['print', 'string.dump']);
});
