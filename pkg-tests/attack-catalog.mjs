// The sandbox-escape and resource-attack catalog: one table of attacks a prompt (or the host's
// callbacks a prompt drives) can mount, each with its exact expected outcome.
// pkg-tests/attacks.test.mjs runs every entry through the built package and, after each, runs a
// known prompt on the same engine (engine alive, next run correct). docs/reliability.md lists the
// catalog. Not a test file itself (node --test picks *.test.mjs only).
//
// An entry: { group: 'escape' | 'resource', area, name, source | lua, options?, expect, next? }
//   expect: { result } for a run that must succeed with that result, or { kind, message } for a
//   failed run (message: exact string or RegExp). `next` is a second run on the same engine with its
//   own { source | lua, expect }: what must not leak from the first. `isolate: { abortAfterMs }`
//   runs the entry in a worker (pkg-tests/budget-worker.mjs) aborted after that many ms, for
//   attacks that could block the thread (options must then be plain data).

import { memoryStore } from '../pkg/index.js';

export const MAIN = '## Main';
/** `line(n)` is the prompt line of the n-th Lua line of a `luaPrompt` block. */
export const line = (n) => `## Main:${n + 5}`;

/** Two sections run in order by the walk: `a` then `b` (whose block gives the result). */
export function twoSections(a, b) {
  return `# Test\n\n## A\n\n\`\`\`lua\n${a}\n\`\`\`\n\n## B\n\n\`\`\`lua\n${b}\n\`\`\`\n`;
}

const BUDGET = 'instruction budget of 10000000 exceeded in section ## Main';
const MEMORY = /^memory ceiling of 67108864 bytes exceeded in section ## Main$/;

/** A Pack with one tool (`hostile/poke`) answering `call`, and an optional prelude. */
export function pack(call = (args) => JSON.stringify(args), prelude = undefined) {
  return { name: 'hostile', tools: [{ name: 'poke', description: 'Poke.', call }], prelude };
}
const usesHostile = (lua) => `---\nuses: [hostile]\n---\n\n# Test\n\n## Main\n\n\`\`\`lua\n${lua}\n\`\`\`\n`;

/** What a prompt checks about a string metatable left alone. */
const STRINGS_INTACT = "return ('abc'):upper() .. #('xy') .. tostring(getmetatable('').__index == string) .. type(getmetatable('').__add)";
const STRINGS_INTACT_RESULT = 'ABC2truefunction';

/** A deeply nested Lua table built without recursion. */
const deepTable = (n) => `local t = {} local c = t for i = 1, ${n} do c[1] = {} c = c[1] end`;

export const attacks = [
  // ---------------------------------------------------------------- bytecode
  { group: 'escape', area: 'bytecode', name: 'load is absent', lua: "return load('return 1')", expect: { kind: 'Lua', message: `${line(1)}: attempt to call a nil value (global 'load')` } },
  { group: 'escape', area: 'bytecode', name: 'string.dump is absent', lua: 'return string.dump(function() end)', expect: { kind: 'Lua', message: `${line(1)}: attempt to call a nil value (field 'dump')` } },
  { group: 'escape', area: 'bytecode', name: 'string.dump is absent through the string metatable', lua: "return type(getmetatable('').__index.dump) .. type(('').dump)", expect: { result: 'nilnil' } },
  { group: 'escape', area: 'bytecode', name: 'no other loader: dofile, loadfile, require_lua, package', lua: 'return type(dofile) .. type(loadfile) .. type(package) .. type(require_lua) .. type(loadstring)', expect: { result: 'nilnilnilnilnil' } },
  {
    group: 'escape', area: 'bytecode', name: 'a Pack prelude in binary form is refused (text mode only)',
    source: usesHostile('return 1'), options: { packs: [pack(undefined, '\x1bLua\x55\x00 binary')] },
    expect: { kind: 'Lua', message: /^Pack `hostile`: its prelude failed to load: .*attempt to load a binary chunk \(mode is 't'\)/ },
  },

  // ---------------------------------------------------------------- shared metatables
  {
    group: 'escape', area: 'shared metatables', name: 'the string metatable changed in one section does not reach the next section',
    source: twoSections("local mt = getmetatable('')\nmt.__index = function() return 'pwned' end\nmt.__add = nil", STRINGS_INTACT),
    expect: { result: STRINGS_INTACT_RESULT },
  },
  {
    group: 'escape', area: 'shared metatables', name: 'the string table changed in one run does not reach the next run',
    lua: "string.upper = function() return 'pwned' end\nstring.rep = nil\ngetmetatable('').__index = {}\nreturn ('x'):upper()",
    expect: { kind: 'Lua', message: `${line(4)}: attempt to call a nil value (method 'upper')` },
    next: { lua: `${STRINGS_INTACT} .. ('x'):rep(3)`, expect: { result: `${STRINGS_INTACT_RESULT}xxx` } },
  },
  { group: 'escape', area: 'shared metatables', name: 'numbers, booleans and nil take no metatable', lua: "local a = pcall(setmetatable, 1, {})\nlocal b = pcall(setmetatable, true, {})\nlocal c = pcall(setmetatable, nil, {})\nreturn tostring(a or b or c) .. tostring(getmetatable(1))", expect: { result: 'falsenil' } },
  {
    group: 'escape', area: 'shared metatables', name: "an Engine error value's metatable cannot register a finalizer",
    lua: "local ok, e = pcall(json.decode, 'x')\nlocal mt = getmetatable(e)\nlocal ok2 = pcall(function() mt.__gc = function() log('late') end end)\npcall(json.decode, 'y')\nreturn type(mt) .. tostring(ok2)",
    expect: { result: 'stringfalse' }, // was: the instance trapped at run end (finalizer calling log)
  },
  {
    group: 'escape', area: 'shared metatables', name: "a task result's metatable cannot register a finalizer",
    source: '# Test\n\n## Main\n\n```lua\nlocal r = tasks.join({ tasks.spawn(\'## W\') })[1]\nlocal mt = getmetatable(r)\nlocal ok = pcall(function() mt.__gc = function() log(\'late\') end end)\ntasks.join({ tasks.spawn(\'## W\') })\nreturn type(mt) .. tostring(ok) .. tostring(r)\n```\n\n## W\n\n---\n\n```lua\nreturn \'w\'\n```\n',
    expect: { result: 'stringfalsew' }, // was: the instance trapped at run end
  },
  { group: 'escape', area: 'shared metatables', name: 'json.array and json.null metatables are protected', lua: "local a = json.array()\nlocal ok = pcall(setmetatable, a, {})\nreturn tostring(getmetatable(a)) .. '|' .. tostring(ok) .. '|' .. type(getmetatable(json.null))", expect: { result: 'json.array|false|nil' } },
  { group: 'escape', area: 'shared metatables', name: "var's proxies do not hand out their metatable", lua: "var.t = {}\nreturn type(getmetatable(var)) .. type(getmetatable(var.t))", expect: { result: 'stringstring' } },

  { group: 'escape', area: 'shared metatables', name: "an Engine error value's metatable is hidden; the value still reads as its message", lua: "local ok, e = pcall(json.decode, 'x')\nreturn getmetatable(e) .. '|' .. select(2, pcall(setmetatable, e, nil)) .. '|' .. e.kind .. '|' .. tostring(e):sub(1, 24) .. '|' .. ('' .. e):sub(1, 6)", expect: { result: 'error value|cannot change a protected metatable|lua|json.decode: invalid JSO|json.d' } },
  {
    group: 'escape', area: 'shared metatables', name: "model handles and tool objects do not hand out a writable metatable",
    source: usesHostile("local m, t = getmetatable(models.get('default')), getmetatable(tools.get('hostile/poke'))\nreturn type(m) .. '|' .. type(t)"),
    options: { packs: [pack()], models: { default: async () => ({ content: 'x' }) } },
    expect: { result: 'boolean|nil' }, // mlua's userdata metatables answer false
  },
  // ---------------------------------------------------------------- sealed globals
  { group: 'escape', area: 'sealed globals', name: 'sys is sealed', lua: "sys.id = 3", expect: { kind: 'Lua', message: "sys is sealed; cannot set 'id'" } },
  { group: 'escape', area: 'sealed globals', name: "sys's metatable cannot be replaced", lua: 'setmetatable(sys, {})', expect: { kind: 'Lua', message: `${line(1)}: cannot change a protected metatable` } },
  { group: 'escape', area: 'sealed globals', name: 'ui is sealed', lua: "ui.interactive = true", expect: { kind: 'Lua', message: "ui is sealed; cannot set 'interactive'" } },
  { group: 'escape', area: 'sealed globals', name: 'prompt is sealed', lua: "prompt.name = 'x'", expect: { kind: 'Lua', message: "prompt is sealed; cannot set 'name'" } },
  { group: 'escape', area: 'sealed globals', name: 'tasks is sealed', lua: 'tasks.spawn = nil', expect: { kind: 'Lua', message: "tasks is sealed; cannot set 'spawn'" } },
  {
    group: 'escape', area: 'sealed globals', name: 'tools.calls is read-only',
    source: usesHostile("tools.call('hostile/poke')\ntools.calls['hostile/poke'] = 0"), options: { packs: [pack()] },
    expect: { kind: 'Lua', message: 'tools.calls is read-only' },
  },
  {
    group: 'escape', area: 'sealed globals', name: 'a replaced sys global does not fool substitution',
    source: '# Test\n\n## Main\n\n```lua\nvar.n = 1\nsys = { id = 99 }\n```\n\n{{sys.id}} {{var.n}}\n\n```lua\nreturn prose\n```\n',
    expect: { result: '1 1' },
  },
  {
    group: 'escape', area: 'sealed globals', name: 'replacing the var global fails the block instead of losing its writes',
    lua: 'var.n = 1\nvar = { n = 42 }',
    expect: { kind: 'Lua', message: "this block assigned the global var: var is the run's JSON state and cannot be replaced; set its fields instead (var.name = value, var.name = nil)" },
  },
  { group: 'escape', area: 'sealed globals', name: 'compactors is sealed', lua: 'compactors.x = 1', expect: { kind: 'Lua', message: "compactors is sealed; cannot set 'x'" } },

  {
    group: 'escape', area: 'lazy globals', name: 'select and table.unpack replaced: the Engine wrappers (tostring, getmetatable, string.format) keep working',
    lua: "select = nil\ntable.unpack = nil\nstring.find = nil\nreturn tostring({}) .. '|' .. string.format('%s %d', {}, 7) .. '|' .. tostring(getmetatable(_G))",
    expect: { result: 'table: 0x00000001|table: 0x00000002 7|nil' }, // was: attempt to call a nil value (global 'select')
  },
  // ---------------------------------------------------------------- _G metatable
  { group: 'escape', area: '_G metatable', name: "the Engine's _G metatable is hidden", lua: 'return tostring(getmetatable(_G))', expect: { result: 'nil' } },
  {
    group: 'escape', area: '_G metatable', name: 'a strict-mode __index set before first use: Engine globals still load, misses raise',
    lua: "setmetatable(_G, { __index = function(_, k) error('undefined global ' .. k, 2) end })\nlocal kinds = type(tools) .. type(tasks) .. type(models) .. type(jump) .. type(packs)\nlocal ok, e = pcall(function() return nosuch end)\nreturn kinds .. '|' .. e",
    expect: { result: `tabletabletablefunctiontable|${line(3)}: undefined global nosuch` },
  },
  {
    group: 'escape', area: '_G metatable', name: 'a strict-mode __newindex set before first use: Engine globals still load, new globals raise',
    lua: "setmetatable(_G, { __newindex = function(_, k) error('no new global ' .. k, 2) end })\nlocal kinds = type(call) .. type(require) .. type(tools.call)\nlocal ok, e = pcall(function() x = 1 end)\nreturn kinds .. '|' .. e",
    expect: { result: `functionfunctionfunction|${line(3)}: no new global x` },
  },
  { group: 'escape', area: '_G metatable', name: 'a locked _G metatable stays locked for the section', lua: "setmetatable(_G, { __metatable = 'locked' })\nreturn getmetatable(_G) .. '|' .. select(2, pcall(setmetatable, _G, nil))", expect: { result: 'locked|cannot change a protected metatable' } },
  {
    group: 'escape', area: '_G metatable', name: 'a locked _G metatable does not reach the next section',
    source: twoSections("setmetatable(_G, { __metatable = 'locked', __index = function() return 'ghost' end })", 'return tostring(getmetatable(_G)) .. tostring(nosuch)'),
    expect: { result: 'nilnil' },
  },
  { group: 'escape', area: '_G metatable', name: '__index = _G loops into a C stack overflow, an error', lua: 'setmetatable(_G, { __index = _G })\nreturn nosuch', expect: { kind: 'Lua', message: '?:?: C stack overflow' } },
  { group: 'escape', area: '_G metatable', name: 'a replaced _ENV sees nothing of the Engine', lua: 'local _ENV = { type = type }\nreturn type(tools) .. type(sys) .. type(string)', expect: { result: 'nilnilnil' } },

  // ---------------------------------------------------------------- lazily loaded Engine globals
  { group: 'escape', area: 'lazy globals', name: 'assigning an Engine global before reading it keeps the assigned value', lua: "tools = 'mine'\njump = 5\nreturn tools .. jump .. type(packs) .. type(call)", expect: { result: 'mine5tablefunction' } },
  { group: 'escape', area: 'lazy globals', name: 'nil assigned before the first read stays nil', lua: 'tasks = nil\nmodels = nil\nreturn tostring(tasks) .. tostring(models) .. type(tools)', expect: { result: 'nilniltable' } },
  {
    group: 'escape', area: 'lazy globals', name: 'type, tostring, pcall, error replaced before first use: the parts keep the originals',
    lua: "type = function() return 'table' end\ntostring = function() error('hijacked') end\npcall = function() return true end\nerror = function() end\ntools.allow_tasks(5)",
    expect: { kind: 'Lua', message: 'tools.allow_tasks targets must be a list of section headings, got number' },
  },
  {
    group: 'escape', area: 'lazy globals', name: 'string functions replaced before first use do not break the parts',
    lua: "string.find = nil\nstring.format = nil\nlocal ok, e = pcall(tools.allow_tasks, { ' ' })\nreturn e.message",
    expect: { result: 'tools.allow_tasks targets must be non-empty section headings' }, // was: the tools part called the prompt's string.find
  },
  {
    group: 'escape', area: 'lazy globals', name: 'a replaced setmetatable does not reach the tasks part',
    source: "# Test\n\n## Main\n\n```lua\nsetmetatable = function() error('hijacked') end\nlocal h = tasks.spawn('## W')\nreturn tostring(tasks.join({ h })[1])\n```\n\n## W\n\n---\n\n```lua\nreturn 'w'\n```\n",
    expect: { result: 'w' },
  },
  {
    group: 'escape', area: 'lazy globals', name: 'an Engine global read through a user __index is the Engine\'s',
    lua: "setmetatable(_G, { __index = function(_, k) return 'fake ' .. k end })\nreturn type(tools) .. type(models) .. nosuch",
    expect: { result: 'tabletablefake nosuch' },
  },

  // ---------------------------------------------------------------- Pack prelude boundary
  {
    group: 'escape', area: 'prelude boundary', name: 'a prelude sees no _G, load or raw functions',
    source: usesHostile('return helper()'),
    options: { packs: [pack(undefined, 'function helper() return type(_G) .. type(load) .. type(rawset) .. type(E) .. type(sys) end')] },
    expect: { result: 'nilnilnilnilnil' },
  },
  {
    group: 'escape', area: 'prelude boundary', name: "a block cannot overwrite a prelude's table",
    source: usesHostile("lib.x = 1"), options: { packs: [pack(undefined, 'lib = { y = 2 }')] },
    expect: { kind: 'Lua', message: "lib is read-only: Pack `hostile` defines it; cannot set 'x'" },
  },
  {
    group: 'escape', area: 'prelude boundary', name: "a prelude's sealed table cannot be unsealed",
    source: usesHostile("return getmetatable(lib) .. '|' .. select(2, pcall(setmetatable, lib, {}))"), options: { packs: [pack(undefined, 'lib = { y = 2 }')] },
    expect: { result: 'lib is sealed|cannot change a protected metatable' },
  },
  {
    group: 'escape', area: 'prelude boundary', name: 'a prelude cannot take an Engine global',
    source: usesHostile('return 1'), options: { packs: [pack(undefined, 'tools = {}')] },
    expect: { kind: 'Lua', message: 'Pack `hostile`: its prelude defines the global `tools`, which is reserved as an Engine global' },
  },
  {
    group: 'escape', area: 'prelude boundary', name: "a prelude's var is read-only at every depth",
    source: usesHostile("var.t = { n = 1 }\nreturn poke_var()"),
    options: { packs: [pack(undefined, "function poke_var() local ok, e = pcall(function() var.t.n = 2 end) return tostring(ok) .. '|' .. getmetatable(var.t) end")] },
    expect: { result: 'false|var is read-only' },
  },

  // ---------------------------------------------------------------- the JS boundary
  { group: 'escape', area: 'JS boundary', name: 'a function as the result', lua: 'return function() end', expect: { kind: 'Lua', message: 'cannot return a function as a result' } },
  { group: 'escape', area: 'JS boundary', name: 'a cyclic table as the result', lua: 'local t = {} t.t = t\nreturn t', expect: { kind: 'Lua', message: 'cannot return a table as a result' } },
  { group: 'escape', area: 'JS boundary', name: 'json.null (userdata) as the result', lua: 'return json.null', expect: { kind: 'Lua', message: 'cannot return a lightuserdata as a result' } },
  { group: 'escape', area: 'JS boundary', name: 'NaN and infinities as results are text', lua: "return tostring(0/0 ~= 0/0) .. ' ' .. math.huge .. ' ' .. -math.huge", expect: { result: 'true inf -inf' } },
  { group: 'escape', area: 'JS boundary', name: 'NaN as the result', lua: 'return 0/0', expect: { result: '-nan' } },
  { group: 'escape', area: 'JS boundary', name: 'NaN into var is refused', lua: 'var.x = 0/0', expect: { kind: 'Lua', message: 'var holds JSON data only: cannot set var.x: NaN and infinities are not JSON data' } },
  { group: 'escape', area: 'JS boundary', name: 'an infinity into json.encode is refused', lua: 'return json.encode({ x = math.huge })', expect: { kind: 'Lua', message: 'json.encode: NaN and infinities are not JSON data' } },
  { group: 'escape', area: 'JS boundary', name: 'a cyclic table into var is refused', lua: 'local t = {} t.t = t\nvar.x = t', expect: { kind: 'Lua', message: 'var holds JSON data only: cannot set var.x: a table that refers to itself (or nests deeper than 200 levels) is not JSON data' } },
  {
    group: 'escape', area: 'JS boundary', name: 'a function in tool arguments is refused before the host sees it',
    source: usesHostile("return tools.call('hostile/poke', { f = function() end })"), options: { packs: [pack()] },
    expect: { kind: 'Lua', message: 'args must be a JSON-representable table: a function is not JSON data' },
  },
  {
    group: 'escape', area: 'JS boundary', name: 'a cyclic table in tool arguments is refused',
    source: usesHostile("local t = {} t.t = t\nreturn tools.call('hostile/poke', t)"), options: { packs: [pack()] },
    expect: { kind: 'Lua', message: 'args must be a JSON-representable table: a table that refers to itself (or nests deeper than 200 levels) is not JSON data' },
  },
  {
    group: 'escape', area: 'JS boundary', name: 'a 20 MiB string result crosses to JS whole',
    lua: "return ('ab'):rep(10 * 1024 * 1024)", expect: { resultLength: 20 * 1024 * 1024 },
  },
  {
    group: 'escape', area: 'JS boundary', name: 'a string that is not UTF-8 does not cross as a result',
    lua: "return '\\xff\\xfe'", expect: { kind: 'Lua', message: 'cannot return a string that is not valid UTF-8 as a result' },
  },

  // ---------------------------------------------------------------- coroutines and yields
  { group: 'escape', area: 'coroutines', name: 'coroutine is absent', lua: 'return coroutine.wrap(print)', expect: { kind: 'Lua', message: `${line(1)}: attempt to index a nil value (global 'coroutine')` } },
  {
    group: 'escape', area: 'coroutines', name: 'a suspending call inside pcall works',
    lua: "local ok, r = pcall(models.infer, 'hi')\nreturn tostring(ok) .. r", options: { models: { default: async () => ({ content: 'yes' }) } },
    expect: { result: 'trueyes' },
  },
  {
    group: 'escape', area: 'coroutines', name: 'a suspending call inside a table.sort comparator (a C boundary) is an error',
    lua: "table.sort({ 3, 2, 1 }, function(a, b) models.infer('x') return a < b end)", options: { models: { default: async () => ({ content: 'yes' }) } },
    expect: { kind: 'Lua', message: 'attempt to yield across a C-call boundary' },
  },
  {
    group: 'escape', area: 'coroutines', name: 'a suspending call inside gsub (a C boundary) is an error',
    lua: "return (('ab'):gsub('.', function(c) return models.infer(c) end))", options: { models: { default: async () => ({ content: 'yes' }) } },
    expect: { kind: 'Lua', message: 'attempt to yield across a C-call boundary' },
  },
  {
    group: 'escape', area: 'coroutines', name: 'a suspending call inside __tostring (a C boundary) is an error',
    lua: "return tostring(setmetatable({}, { __tostring = function() return models.infer('x') end }))", options: { models: { default: async () => ({ content: 'yes' }) } },
    expect: { kind: 'Lua', message: 'attempt to yield across a C-call boundary' },
  },
  {
    group: 'escape', area: 'coroutines', name: "a suspending call inside xpcall's handler",
    lua: "local ok, r = xpcall(error, function(m) return models.infer('x') end, 'boom')\nreturn tostring(ok) .. '|' .. tostring(r)", options: { models: { default: async () => ({ content: 'yes' }) } },
    expect: { result: 'false|error in error handling' },
  },
  {
    group: 'escape', area: 'coroutines', name: 'a to-be-closed variable runs its __close when the block fails',
    lua: "local x <close> = setmetatable({}, { __close = function() log('closed') end })\nerror('boom', 0)",
    expect: { kind: 'Lua', message: 'boom' },
  },
  {
    group: 'escape', area: 'coroutines', name: 'a to-be-closed variable in a block cancelled while suspended does not call the Engine after the run',
    lua: "local x <close> = setmetatable({}, { __close = function() log('late') store.write('late.txt', 'x') end })\nreturn models.infer('hi')",
    options: () => {
      const c = new AbortController();
      return { signal: c.signal, models: { default: () => { setTimeout(() => c.abort(), 10); return new Promise(() => {}); } } };
    },
    expect: { kind: 'Cancelled', message: 'the run was cancelled' },
  },
  {
    group: 'escape', area: 'coroutines', name: 'a __close that loops for ever when the budget unwinds the block',
    lua: "local x <close> = setmetatable({}, { __close = function() while true do end end })\nwhile true do end",
    expect: { kind: 'Limit', message: BUDGET },
  },

  // ---------------------------------------------------------------- thrown error objects
  { group: 'escape', area: 'error objects', name: 'a table with __tostring thrown out of a block', lua: "error(setmetatable({}, { __tostring = function() return 'custom' end }))", expect: { kind: 'Lua', message: '(error object is a table value)' } },
  { group: 'escape', area: 'error objects', name: 'a __tostring that raises', lua: "error(setmetatable({}, { __tostring = function() error('inner') end }))", expect: { kind: 'Lua', message: '(error object is a table value)' } },
  { group: 'escape', area: 'error objects', name: 'a __tostring that loops for ever', lua: "error(setmetatable({}, { __tostring = function() while true do end end }))", expect: { kind: 'Lua', message: '(error object is a table value)' } },
  { group: 'escape', area: 'error objects', name: 'a __tostring that answers a table', lua: "error(setmetatable({}, { __tostring = function() return {} end }))", expect: { kind: 'Lua', message: '(error object is a table value)' } },
  { group: 'escape', area: 'error objects', name: 'an __index that raises on every field', lua: "error(setmetatable({}, { __index = function(_, k) error('trap ' .. tostring(k)) end }))", expect: { kind: 'Lua', message: '(error object is a table value)' } },
  { group: 'escape', area: 'error objects', name: 'a forged error value claiming kind limit', lua: "error({ kind = 'limit', message = 'fake budget' })", expect: { kind: 'Lua', message: 'fake budget' } },
  {
    group: 'escape', area: 'error objects', name: "a forged error value with a stolen Engine metatable",
    lua: "local ok, e = pcall(json.decode, 'x')\nlocal mt = getmetatable(e)\nerror(setmetatable({ kind = 'cancelled', message = 'fake cancel' }, type(mt) == 'table' and mt or nil))",
    expect: { kind: 'Lua', message: 'fake cancel' }, // was: the run reported Cancelled
  },
  { group: 'escape', area: 'error objects', name: 'a function thrown', lua: 'error(function() end)', expect: { kind: 'Lua', message: '(error object is a function value)' } },
  { group: 'escape', area: 'error objects', name: 'a 10 MiB error message', lua: "error(('x'):rep(10 * 1024 * 1024), 0)", expect: { kind: 'Lua', messageLength: 10 * 1024 * 1024 } },
  { group: 'escape', area: 'error objects', name: 'error(msg, 2) names the caller', lua: "local function f() error('bad', 2) end\nf()", expect: { kind: 'Lua', message: `${line(2)}: bad` } },
  { group: 'escape', area: 'error objects', name: 'xpcall(error, error) answers false', lua: 'local ok, e = xpcall(error, error)\nreturn tostring(ok)', expect: { result: 'false' } },

  // ---------------------------------------------------------------- finalizers
  { group: 'escape', area: 'finalizers', name: '__gc is refused in setmetatable', lua: "setmetatable({}, { __gc = function() log('late') end })", expect: { kind: 'Lua', message: `${line(1)}: setmetatable: __gc finalizers are not available in Runvil; release resources explicitly` } },
  { group: 'escape', area: 'finalizers', name: '__gc added after setmetatable is never called', lua: "local mt = {}\nlocal t = setmetatable({}, mt)\nmt.__gc = function() while true do end end\nt = nil\nreturn 'ok'", expect: { result: 'ok' } },
  { group: 'escape', area: 'finalizers', name: '__gc through an __index on the metatable is refused too', lua: "local mt = setmetatable({}, { __index = { __gc = function() log('late') end } })\nsetmetatable({}, mt)\nreturn 'ok'", expect: { result: 'ok' } },

  // ---------------------------------------------------------------- recursion and stacks
  { group: 'resource', area: 'stack', name: 'unbounded Lua recursion', lua: 'local function f(n) return f(n + 1) + 1 end\nreturn f(1)', expect: { kind: 'Lua', message: `${line(1)}: stack overflow` } },
  { group: 'resource', area: 'stack', name: 'an unbounded tail call is a loop: the budget', lua: 'local function f(n) return f(n + 1) end\nreturn f(1)', expect: { kind: 'Limit', message: BUDGET } },
  { group: 'resource', area: 'stack', name: 'recursion through pcall (C stack)', lua: 'local function f() local ok, e = pcall(f) error(e, 0) end\nf()', expect: { kind: 'Lua', message: 'C stack overflow' } },
  { group: 'resource', area: 'stack', name: 'recursion through __index (C stack)', lua: "local t = setmetatable({}, { __index = function(t, k) return t[k] end })\nreturn t.x", expect: { kind: 'Lua', message: `${line(1)}: C stack overflow` } },
  { group: 'resource', area: 'stack', name: 'recursion through __tostring (C stack)', lua: "local t t = setmetatable({}, { __tostring = function(x) return tostring(x) end })\nreturn tostring(t)", expect: { kind: 'Lua', message: 'C stack overflow' } },
  { group: 'resource', area: 'stack', name: 'recursion through gsub callbacks (C stack)', lua: "local function f(s) return (s:gsub('.', function(c) return f(c) end)) end\nreturn f('ab')", expect: { kind: 'Lua', message: 'C stack overflow' } },
  { group: 'resource', area: 'stack', name: 'a deeply nested literal is a parse error', lua: `return ${'{'.repeat(100000)}${'}'.repeat(100000)}`, expect: { kind: 'Lua', message: '## Main: C stack overflow' } }, // was: mlua's traceback in the message
  { group: 'resource', area: 'stack', name: 'a deeply nested expression is a parse error', lua: `return ${'('.repeat(100000)}1${')'.repeat(100000)}`, expect: { kind: 'Lua', message: '## Main: C stack overflow' } }, // was: mlua's traceback in the message

  // ---------------------------------------------------------------- memory
  { group: 'resource', area: 'memory', name: 'string.rep of 1 GiB: the budget refuses it before allocating', lua: "return #('x'):rep(1 << 30)", expect: { kind: 'Limit', message: BUDGET } },
  { group: 'resource', area: 'memory', name: 'string.rep of a size Lua cannot hold', lua: "return #('x'):rep(1 << 62)", expect: { kind: 'Lua', message: `${line(1)}: resulting string too large` } },
  { group: 'resource', area: 'memory', name: 'string.rep with a separator past the ceiling', lua: "return #('x'):rep(1 << 26, ',')", expect: { kind: 'Limit', message: MEMORY } },
  { group: 'resource', area: 'memory', name: 'doubling concatenation', lua: "local s = 'x'\nwhile true do s = s .. s end", expect: { kind: 'Limit', message: MEMORY } },
  { group: 'resource', area: 'memory', name: 'table.concat past the ceiling', lua: "local t = {}\nfor i = 1, 64 do t[i] = ('x'):rep(1 << 20) end\nlocal a = table.concat(t)\nlocal b = table.concat(t, ',')\nreturn #a + #b", expect: { kind: 'Limit', message: MEMORY } },
  { group: 'resource', area: 'memory', name: 'a table of a billion slots', lua: 'local t = {}\nfor i = 1, 1e9 do t[i] = i end', expect: { kind: 'Limit', message: MEMORY } },
  { group: 'resource', area: 'memory', name: 'table.unpack of a huge range', lua: 'return select(\'#\', table.unpack({}, 1, 1e8))', expect: { kind: 'Lua', message: `${line(1)}: too many results to unpack` } },
  { group: 'resource', area: 'memory', name: 'pcall cannot swallow the ceiling', lua: "local ok = pcall(function() local t = {} for i = 1, 1e9 do t[i] = i end end)\nreturn tostring(ok)", expect: { kind: 'Limit', message: MEMORY } },
  {
    group: 'resource', area: 'memory', name: 'model replies count against the ceiling',
    lua: "local t = {}\nfor i = 1, 20 do t[i] = models.infer('hi') end\nreturn #t", options: { limits: { memoryBytes: 4 << 20 }, models: { default: async () => ({ content: 'y'.repeat(1 << 20) }) } },
    expect: { kind: 'Limit', message: /^memory ceiling of 4194304 bytes exceeded/ },
  },
  {
    group: 'resource', area: 'memory', name: 'store reads count against the ceiling',
    lua: "local t = {}\nfor i = 1, 20 do t[i] = store.read('big.txt') end\nreturn #t", options: () => ({ limits: { memoryBytes: 4 << 20 }, store: memoryStore({ 'big.txt': 'y'.repeat(1 << 20) }) }),
    expect: { kind: 'Limit', message: /^memory ceiling of 4194304 bytes exceeded/ },
  },

  // ---------------------------------------------------------------- CPU: the work budget
  { group: 'resource', area: 'budget', name: 'an endless loop', lua: 'while true do end', expect: { kind: 'Limit', message: BUDGET } },
  { group: 'resource', area: 'budget', name: 'pattern backtracking (a*)^16 b', lua: 'return (("a"):rep(16):find(("a*"):rep(16) .. "b"))', expect: { kind: 'Limit', message: BUDGET } },
  { group: 'resource', area: 'budget', name: 'pattern backtracking .-.-.-b', lua: 'local s = ("a"):rep(4000) for i = 1, 1e9 do s:find(".-.-.-b") end', expect: { kind: 'Limit', message: BUDGET } },
  { group: 'resource', area: 'budget', name: 'pattern a?^n a^n', lua: "return (('a'):rep(30):match(('a?'):rep(30) .. ('a'):rep(30)))", expect: { kind: 'Limit', message: BUDGET } },
  { group: 'resource', area: 'budget', name: 'too many captures is an error, not a search', lua: "return (('a'):rep(40):find(('(a)'):rep(40)))", expect: { kind: 'Lua', message: `${line(1)}: too many captures` } },
  { group: 'resource', area: 'budget', name: 'gmatch over a large string in a loop', lua: 'local s = ("a"):rep(100000) for i = 1, 1e9 do for w in s:gmatch("a") do end end', expect: { kind: 'Limit', message: BUDGET } },
  { group: 'resource', area: 'budget', name: 'upper() of 10 MB in a loop', lua: 'local s = ("x"):rep(10 * 1024 * 1024) for i = 1, 1e9 do local u = s:upper() end', expect: { kind: 'Limit', message: BUDGET } },
  { group: 'resource', area: 'budget', name: 'table.move over 1e13 slots', lua: 'table.move({}, 1, 1e13, 2)', expect: { kind: 'Limit', message: BUDGET } },
  { group: 'resource', area: 'budget', name: 'table.sort in a loop', lua: 'local t = {} for i = 1, 200000 do t[i] = (i * 7919) % 200003 end for i = 1, 1e9 do table.sort(t) end', expect: { kind: 'Limit', message: BUDGET } },
  { group: 'resource', area: 'budget', name: 'table.concat through an __index and a huge __len', lua: "local t = setmetatable({}, { __len = function() return 1 << 40 end, __index = function() return 'x' end })\nreturn #table.concat(t)", expect: { kind: 'Limit', message: BUDGET } },
  { group: 'resource', area: 'budget', name: 'ipairs over an endless __index', lua: "local t = setmetatable({}, { __index = function(_, i) return i end })\nfor i, v in ipairs(t) do end", expect: { kind: 'Limit', message: BUDGET } },
  { group: 'resource', area: 'budget', name: 'a pcall(error, {}) loop', lua: 'while true do pcall(error, {}) end', expect: { kind: 'Limit', message: BUDGET } },
  { group: 'resource', area: 'budget', name: 'pcall cannot swallow the budget', lua: 'while true do pcall(function() while true do end end) end', expect: { kind: 'Limit', message: BUDGET } },
  { group: 'resource', area: 'budget', name: 'a __close cannot swallow the budget', lua: "local ok = pcall(function() local x <close> = setmetatable({}, { __close = function() end }) while true do end end)\nreturn 'swallowed'", expect: { kind: 'Limit', message: BUDGET } },
  {
    group: 'resource', area: 'budget', name: 'abort during a C loop with the budget lifted',
    lua: 'local s = ("a"):rep(2000) while true do s:find(".-b") end',
    options: () => { const c = new AbortController(); setTimeout(() => c.abort(), 50); return { signal: c.signal, limits: { instructions: 1e15 } }; },
    expect: { kind: 'Cancelled', message: 'the run was cancelled' },
  },
  {
    group: 'resource', area: 'budget', name: 'a jump loop (a fresh budget each entry) honours abort',
    source: "# Test\n\n## Main\n\n```lua\njump('## Loop')\n```\n\n## Loop\n\n```lua\njump('## Main')\n```\n",
    // Was: the run never gave the host a turn (no timer fired, abort ignored, for ever). Run in a
    // worker: a regression blocks that thread, not the test's.
    isolate: { abortAfterMs: 100 },
    expect: { kind: 'Cancelled', message: 'the run was cancelled' },
  },
  {
    group: 'resource', area: 'budget', name: 'call recursion is bounded',
    source: "# Test\n\n## Main\n\n```lua\nreturn call('## Again')\n```\n\n## Again\n\n```lua\nreturn call('## Main')\n```\n",
    expect: { kind: 'Lua', message: /call depth limit of 8 reached/ },
  },

  // ---------------------------------------------------------------- the fixed defects a prompt can drive
  {
    group: 'resource', area: 'fixed defects', name: 'a tool answering a function',
    source: usesHostile("local ok, e = pcall(tools.call, 'hostile/poke')\nreturn e.message"), options: { packs: [pack(() => () => 1)] },
    expect: { result: "tool call failure: the tool's output is not JSON (it is a function)" },
  },
  {
    group: 'resource', area: 'fixed defects', name: 'a tool throwing a Proxy whose traps throw',
    source: usesHostile("local ok, e = pcall(tools.call, 'hostile/poke')\nreturn e.message"),
    options: { packs: [pack(() => { throw new Proxy({}, { get() { throw new Error('trap'); }, getPrototypeOf() { throw new Error('trap'); }, has() { throw new Error('trap'); } }); })] },
    expect: { result: 'tool call failure: the tool threw a value that could not be inspected' },
  },
  {
    group: 'resource', area: 'fixed defects', name: 'a model reply with 100,000 tool calls',
    source: usesHostile("messages:user('go')\nreturn models.loop()"),
    options: { packs: [pack()], models: { default: async () => ({ content: '', finish_reason: 'tool_calls', tool_calls: Array.from({ length: 100000 }, (_, i) => ({ id: `c${i}`, name: 'hostile_poke', arguments: {} })) }) } },
    expect: { kind: 'Model', message: "the model's reply asks for 100000 tool calls; the limit is 128 per reply" },
  },
  {
    group: 'resource', area: 'fixed defects', name: 'abort while the store never settles',
    lua: "store.write('a.txt', 'x')\nreturn 'done'",
    options: () => { const c = new AbortController(); setTimeout(() => c.abort(), 50); return { signal: c.signal, store: { open: () => new Promise(() => {}), read: async () => '', commit: async () => {} } }; },
    expect: { kind: 'Cancelled', message: 'the run was cancelled' },
  },
  { group: 'resource', area: 'fixed defects', name: 'math.frexp of infinities', lua: "local m, e = math.frexp(math.huge)\nreturn tostring(m) .. ',' .. e", expect: { result: 'inf,0' } },
  { group: 'resource', area: 'fixed defects', name: 'a prompt without a title names its section', source: "Hello\n\n```lua\nerror('x')\n```\n", expect: { kind: 'Lua', message: '# (untitled):4: x' } },
  { group: 'resource', area: 'fixed defects', name: 'string.format hides addresses', lua: "return select(2, pcall(string.format, '%p', {}))", expect: { result: "bad argument #1 to 'string.format' (%p is not available: addresses differ between runs)" } },

  // ---------------------------------------------------------------- JSON and var
  { group: 'resource', area: 'json', name: 'json.encode of a 100,000-deep table', lua: `${deepTable(100000)}\nreturn json.encode(t)`, expect: { kind: 'Lua', message: 'json.encode: a table that refers to itself (or nests deeper than 200 levels) is not JSON data' } },
  { group: 'resource', area: 'json', name: 'json.decode of 100,000 nested arrays', lua: "return json.decode(('['):rep(100000) .. (']'):rep(100000))", expect: { kind: 'Lua', message: 'json.decode: invalid JSON: recursion limit exceeded at line 1 column 128' } },
  { group: 'resource', area: 'json', name: 'a 100,000-deep table into var', lua: `${deepTable(100000)}\nvar.x = t`, expect: { kind: 'Lua', message: 'var holds JSON data only: cannot set var.x: a table that refers to itself (or nests deeper than 200 levels) is not JSON data' } },
  {
    group: 'resource', area: 'json', name: 'a 100,000-deep table as tool arguments',
    source: usesHostile(`${deepTable(100000)}\nreturn tools.call('hostile/poke', t)`), options: { packs: [pack()] },
    expect: { kind: 'Lua', message: 'args must be a JSON-representable table: a table that refers to itself (or nests deeper than 200 levels) is not JSON data' },
  },
  {
    group: 'resource', area: 'json', name: 'a tool answering 5,000 nested arrays',
    source: usesHostile("return tools.call('hostile/poke')"),
    options: { packs: [{ name: 'hostile', tools: [{ name: 'poke', description: 'Poke.', output: 'structured', call: () => JSON.parse('['.repeat(5000) + ']'.repeat(5000)) }] }] },
    expect: { kind: 'Tool', message: /^tool call failure: the tool's output is not JSON \(/ }, // the JS engine's own stack message
  },
  { group: 'resource', area: 'json', name: 'a var proxy assigned into its own subtree is copied, not a cycle', lua: "var.a = { n = 1 }\nvar.a.self = var.a\nvar.a.self.n = 2\nreturn json.encode(var.a)", expect: { result: '{"n":1,"self":{"n":2}}' } },
  { group: 'resource', area: 'json', name: 'var assigned into itself', lua: "var.n = 1\nvar.me = var\nreturn json.encode(var.me)", expect: { result: '{"n":1}' } },
  { group: 'resource', area: 'json', name: 'a table shared twice (no cycle) into var', lua: "local s = { 1 }\nvar.x = { a = s, b = s }\nreturn json.encode(var.x)", expect: { result: '{"a":[1],"b":[1]}' } },

  // ---------------------------------------------------------------- source and frontmatter
  { group: 'resource', area: 'source', name: 'a 17 MiB prompt', source: `# Huge\n\n${'x'.repeat(17 * 1024 * 1024)}`, expect: { kind: 'Parse', message: /^the prompt is \d+ bytes; the limit is 16777216 bytes \(16 MiB\)$/ } },
  { group: 'resource', area: 'source', name: '80 KB of [ in frontmatter', source: `---\nx: ${'['.repeat(80000)}\n---\n\n# T\n`, expect: { kind: 'Frontmatter', message: 'invalid frontmatter: collections nested deeper than 64 levels (line 2, column 68)' } },
  { group: 'resource', area: 'source', name: '50,000-deep {a: in frontmatter', source: `---\nx: ${'{a: '.repeat(50000)}\n---\n\n# T\n`, expect: { kind: 'Frontmatter', message: 'invalid frontmatter: collections nested deeper than 64 levels (line 2, column 260)' } },
  { group: 'resource', area: 'source', name: 'a block of 1 MB of Lua locals', lua: `${'local a = 1\n'.repeat(100000)}return 'many'`, expect: { kind: 'Lua', message: "## Main:207: too many local variables (limit is 200) in main function near 'local'" } },
];
