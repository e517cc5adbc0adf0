-- A part of the Engine's Lua side that bootstrap.lua loads the first time a block reads one of
-- its globals (lua/chunks.rs). It gets the globals table, `E` and `core` (the helpers and the
-- base functions bootstrap.lua captured before any prompt code ran: a block may have replaced
-- the globals by the time a part loads) and returns what it defines: `globals`, the Engine
-- globals to install, and whatever other parts or bootstrap.lua use.
local G, E, core = ...
local check, raise, make_error = core.check, core.raise, core.make_error
local raw_setmetatable, raw_set, type, tostring, next = core.raw_setmetatable, core.raw_set, core.type, core.tostring, core.next
local std, raw_error = core.std, core.raw_error
local math_type, utf8_len = core.math_type, std.utf8.len

-- Pack preludes (chapter 002, "Pack preludes"). Each declared Pack's prelude runs in an
-- environment of its own that sees only a small set of globals; what it assigns is checked
-- against the reserved names (all of a prelude's globals, in byte order) and installs into _G,
-- tables as sealed proxies.
local ENGINE_GLOBALS, STD_GLOBALS, KEYWORDS -- the reserved names, made by the first install
local function reserved_names()
  ENGINE_GLOBALS, STD_GLOBALS, KEYWORDS = {}, {}, {}
  for _, n in next, check(E.engine_globals()) do ENGINE_GLOBALS[n] = true end
  for _, n in next, { 'assert', 'error', 'getmetatable', 'ipairs', 'next', 'pairs', 'pcall', 'select',
    'setmetatable', 'tonumber', 'tostring', 'type', 'xpcall', 'string', 'table', 'math', 'utf8', '_G', '_VERSION',
    'load', 'dofile', 'loadfile', 'print', 'rawget', 'rawset', 'rawequal', 'rawlen', 'collectgarbage', 'coroutine',
    'io', 'os', 'debug', 'package', 'warn' } do
    STD_GLOBALS[n] = true
  end
  for _, n in next, { 'and', 'break', 'do', 'else', 'elseif', 'end', 'false', 'for', 'function', 'global', 'goto',
    'if', 'in', 'local', 'nil', 'not', 'or', 'repeat', 'return', 'then', 'true', 'until', 'while' } do
    KEYWORDS[n] = true
  end
end
local raw_sort = std.table.sort
local prelude_owner = {}

local function seal(name, pack, t)
  return raw_setmetatable({}, {
    __index = t,
    __newindex = function(_, k)
      local shown = type(k) == 'string' and k or (math_type(k) == 'integer' and tostring(k) or type(k))
      raise('lua', name .. ' is read-only: Pack `' .. pack .. '` defines it; cannot set \'' .. shown .. '\'')
    end,
    __metatable = name .. ' is sealed',
  })
end

local function install_preludes()
  local list = check(E.preludes())
  if #list == 0 then return end
  if not KEYWORDS then reserved_names() end
  local guards, shims = core.part('guards').globals, core.part('proxies').shims
  for i = 1, #list do
    local id, source = list[i][1], list[i][2]
    local view = {
      assert = std.assert, error = std.error, getmetatable = guards.getmetatable, ipairs = std.ipairs,
      next = std.next, pairs = std.pairs, pcall = std.pcall, select = std.select, setmetatable = guards.setmetatable,
      tonumber = std.tonumber, tostring = std.tostring, type = std.type, xpcall = guards.xpcall,
      string = std.string, table = std.table, math = std.math,
      tools = G.tools, store = G.store, untrusted = G.untrusted, json = G.json, var = check(E.prelude_var(shims)),
    }
    local env = raw_setmetatable({}, { __index = view })
    local fail_load = function(message)
      raise('lua', 'Pack `' .. id .. '`: its prelude failed to load: ' .. tostring(message)
        .. '. A prelude only defines functions; it must not call tools while loading.')
    end
    local compiled, chunk, err = E.load_prelude(source, id, env)
    if not compiled then fail_load(err) end
    E.prelude_loading(true)
    local loaded, e = std.pcall(chunk, id)
    E.prelude_loading(false)
    if not loaded then fail_load(e) end
    local names = {}
    for k in next, env do names[#names + 1] = k end
    raw_sort(names, function(a, b) return tostring(a) < tostring(b) end)
    for _, name in next, names do
      if type(name) ~= 'string' or not utf8_len(name) then
        raise('lua', 'Pack `' .. id .. '`: its prelude defines a global whose name is not a valid UTF-8 string')
      end
      local kind = ENGINE_GLOBALS[name] and 'an Engine global' or (KEYWORDS[name] and 'a Lua keyword')
        or (STD_GLOBALS[name] and 'a Lua standard-library global')
      if kind then
        raise('lua', 'Pack `' .. id .. '`: its prelude defines the global `' .. name .. '`, which is reserved as ' .. kind)
      end
      if prelude_owner[name] then
        raise('lua', 'Pack `' .. id .. '`: its prelude defines the global `' .. name .. '`, which Pack `'
          .. prelude_owner[name] .. '` already defines')
      end
    end
    for _, name in next, names do
      local v = env[name]
      prelude_owner[name] = id
      raw_set(G, name, type(v) == 'table' and seal(name, id, v) or v)
    end
  end
end


return { install = install_preludes }
