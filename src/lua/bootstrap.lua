-- Runs first in every section VM (and the H1 pass), with the sandboxed base library in place
-- and `E`, the table of the Engine's Rust functions. It installs the Engine globals, the
-- Engine-owned pcall/xpcall and the _G metatable, and returns the internals the block runner
-- needs. Nothing here is reachable from prompt code except through the globals it sets.
--
-- Convention: Rust functions answer `true, results...` or `false, kind, message[, fields]`;
-- `check` turns the second form into a raised error value. Error values are tables with
-- `kind` and `message` (and the extra fields a chapter lists) whose `tostring` and `..` give
-- the message.
local G, E = ...
-- E holds the Engine's values (h1, json_null); reading any other key
-- binds the Rust function of that name (lua/ops.rs), and an unknown name is an error. Binding
-- costs: the code below looks each function up in E where it calls it, never while this chunk runs, so a
-- section entry binds only what its blocks use.
local raw_pcall, raw_error, raw_setmetatable, raw_getmetatable = pcall, error, setmetatable, getmetatable
local raw_set, raw_get, raw_find = rawset, rawget, string.find
-- (tostring, string.format and math.frexp are Lua's own, patched in C for determinism:
-- vendor/lua-src/patches/determinism.patch.)
local type, tostring, next, select = type, tostring, next, select

-- Protected: a prompt that could reach this table could give it a `__gc`, and every error value
-- made after that would be registered for finalization behind setmetatable's refusal (and a
-- finalizer calling the Engine at VM close traps the instance); or lend it to a table of its own
-- to forge an Engine error of any kind.
-- With the metatable protected, getmetatable no longer tells an error value: the Engine knows
-- its own by this weak set.
local ERR = { __name = 'error value', __metatable = 'error value' }
local error_values = raw_setmetatable({}, { __mode = 'k' })
ERR.__tostring = function(e) return e.message end
local function text_of(x)
  if error_values[x] then return x.message end
  return x
end
ERR.__concat = function(a, b) return text_of(a) .. text_of(b) end

-- Substitution failures are remembered so that, uncaught in the H1 pass, they become the
-- "H1 gate failed" requirements notice instead of a plain Lua error.
local substitution_errors = raw_setmetatable({}, { __mode = 'k' })

local function make_error(kind, message, fields)
  local e = { kind = kind, message = message }
  if fields then
    for k, v in next, fields do e[k] = v end
  end
  error_values[e] = true
  return raw_setmetatable(e, ERR)
end

local function raise(kind, message, fields)
  raw_error(make_error(kind, message, fields), 0)
end

local function check(ok, ...)
  if ok then return ... end
  raise(...)
end

-- Errors raised by Rust methods (userdata fields, messages) arrive wrapped by mlua; the Engine's
-- pcall hands prompts the same error value shape as every other Engine error.
local function normalize(e)
  if type(e) == 'userdata' then
    local kind, message = E.error_parts(e)
    if kind then return make_error(kind, message) end
  end
  return e
end

-- pcall and xpcall catch Lua errors and error values, never the Engine's control signals
-- (instruction budget, memory ceiling, cancellation; jump and determinism when they exist): `E.is_control`
-- says whether the run is being stopped, and then the error goes on up.
local function pass(ok, ...)
  if ok then return true, ... end
  local e = ...
  if E.is_control(e) then raw_error(e, 0) end
  return false, normalize(e)
end
G.pcall = function(f, ...) return pass(raw_pcall(f, ...)) end
-- xpcall (parts/guards.lua) runs the handler where Lua runs it, before the stack unwinds and
-- protected: an error in the handler is Lua's "error in error handling", never the run's end. A
-- control signal passes the handler by, wrapped, and goes on up.

-- _G's metatable belongs to the Engine: `prose` and `argv` are not raw globals, they resolve
-- here. A prompt's own setmetatable(_G, mt) (parts/guards.lua) is kept aside in
-- `shared.user_mt` and consulted for every other miss, so `__index` defaults and strict-mode
-- metatables behave as the author wrote them.
local shared = {}
-- Lua's own xpcall, setmetatable and getmetatable leave _G until a block reads the names: then the
-- guards part installs the Engine's (found through G_MT.__index, which only runs for absent keys).
local raw_xpcall = xpcall
G.xpcall, G.setmetatable, G.getmetatable = nil, nil, nil
-- The Engine globals whose code loads on first read (lua/parts/*.lua, see `part` below), by the
-- part that defines them, and those a block assigned before reading: its value stands.
local PART_OF = { jump = 'control', call = 'control', require = 'control', tasks = 'tasks',
  tools = 'tools', packs = 'tools', models = 'models', json = 'basics', store = 'basics', log = 'basics',
  untrusted = 'basics', sys = 'basics', prompt = 'basics', ui = 'basics', messages = 'basics',
  compactors = 'basics', xpcall = 'guards', setmetatable = 'guards', getmetatable = 'guards' }
local assigned = {}
local part
-- In the H1 pass argv is an ordinary value the H1 blocks may repair; the Engine freezes what
-- it holds when the pass ends. After that, sections read the frozen argv through Rust.
local h1 = E.h1
local argv_value = h1 and E.argv_initial() or nil
local G_MT = {}
G_MT.__index = function(t, k)
  if k == 'prose' then
    local ok, a, b = E.prose()
    if ok then return a end
    local e = make_error('lua', b)
    substitution_errors[e] = true
    raw_error(e, 0)
  end
  if k == 'argv' then
    if h1 then return argv_value end
    -- (A table argv is a read-only proxy: the proxies' metamethods go with the read.)
    return check(E.argv_frozen(part('proxies').shims))
  end
  -- var's proxy is made on first read: an entry that never reads var does not pay for it
  -- (nor load the proxies' metamethods).
  if k == 'var' and not assigned.var then
    local v = check(E.var_root(part('proxies').shims))
    raw_set(t, 'var', v)
    return v
  end
  local p = PART_OF[k]
  if p and not assigned[k] then
    part(p)
    return raw_get(t, k)
  end
  local mt = shared.user_mt
  if mt ~= nil then
    local h = mt.__index
    if type(h) == 'function' then return h(t, k) end
    if h ~= nil then return h[k] end
  end
  return nil
end
G_MT.__newindex = function(t, k, v)
  if k == 'argv' then
    if h1 then argv_value = v; return end
    raise('lua', 'argv is frozen after the H1 pass; repair it in the H1 body')
  end
  if PART_OF[k] or k == 'var' then assigned[k] = true end
  if k == 'prose' then raise('lua', 'prose is read-only: it is the rendered prose above the current block') end
  local mt = shared.user_mt
  if mt ~= nil then
    local h = mt.__newindex
    if type(h) == 'function' then return h(t, k, v) end
    if h ~= nil then h[k] = v; return end
  end
  raw_set(t, k, v)
end
raw_setmetatable(G, G_MT)

-- The parts: what the Engine's Lua side needs only when a block uses it (call, jump, require,
-- tasks, tools, packs, models, Pack preludes) is compiled apart and loaded into a VM the first
-- time it is needed, so a section entry that uses none of it does not pay for it. `core` is what
-- a part may use: it is built now, before any prompt code runs, because by the time a part
-- loads a block may have replaced any global.
local core = {
  check = check, raise = raise, make_error = make_error,
  pcall = G.pcall, raw_pcall = raw_pcall, raw_error = raw_error, raw_setmetatable = raw_setmetatable,
  raw_set = raw_set, type = type, tostring = tostring, next = next, ipairs = ipairs, math_type = math.type,
  find = raw_find, normalize = normalize, shared = shared, raw_xpcall = raw_xpcall,
  raw_getmetatable = raw_getmetatable, raw_get = raw_get, select = select,
  -- What a Pack prelude's environment offers (parts/preludes.lua, with the guards part's
  -- getmetatable, setmetatable and xpcall).
  std = {
    assert = assert, error = raw_error, ipairs = ipairs, next = next, pairs = pairs, pcall = G.pcall,
    select = select, tonumber = tonumber, tostring = tostring, type = type, string = string,
    table = table, math = math, utf8 = utf8,
  },
}
local parts = {}
part = function(name)
  local p = parts[name]
  if p then return p end
  p = check(E.load_part(name))(G, E, core)
  parts[name] = p
  for k, v in next, p.globals or {} do
    if not assigned[k] then raw_set(G, k, v) end
  end
  return p
end
core.part = part

-- The block runner: each block is a function run under a raw pcall on the Engine's own
-- coroutine, so an error value keeps its identity and the budget hook can yield to the host.
local function run_block(f, ...) return raw_pcall(f, ...) end

-- The internals the block runner needs, as results rather than a table (lua/mod.rs, `build_vm`,
-- takes them in this order): reading each out of a table cost the entry a protected call.
-- (The weak sets themselves: Rust looks an error value up with a raw read.)
return run_block,
  function() return argv_value end,
  function() return part('preludes').install() end,
  error_values,
  substitution_errors
