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
-- E holds the Engine's values (h1, json_null, messages, engine_globals); reading any other key
-- binds the Rust function of that name (lua/ops.rs), and an unknown name is an error.
local raw_pcall, raw_error, raw_setmetatable, raw_getmetatable = pcall, error, setmetatable, getmetatable
local raw_set = rawset
local type, tostring, next = type, tostring, next

local ERR = { __name = 'error value' }
ERR.__tostring = function(e) return e.message end
local function text_of(x)
  if raw_getmetatable(x) == ERR then return x.message end
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
local error_parts = E.error_parts
local function normalize(e)
  if type(e) == 'userdata' then
    local kind, message = error_parts(e)
    if kind then return make_error(kind, message) end
  end
  return e
end

-- pcall and xpcall catch Lua errors and error values, never the Engine's control signals
-- (instruction budget, memory ceiling, cancellation; jump and determinism when they exist): `E.is_control`
-- says whether the run is being stopped, and then the error goes on up.
local is_control = E.is_control
local function pass(ok, ...)
  if ok then return true, ... end
  local e = ...
  if is_control(e) then raw_error(e, 0) end
  return false, normalize(e)
end
G.pcall = function(f, ...) return pass(raw_pcall(f, ...)) end
-- xpcall runs the handler where Lua runs it, before the stack unwinds and protected: an error in
-- the handler is Lua's "error in error handling", never the run's end. A control signal passes the
-- handler by, wrapped, and goes on up.
local raw_xpcall, CONTROL = xpcall, {}
local function xpass(ok, ...)
  if ok then return true, ... end
  local e = ...
  if raw_getmetatable(e) == CONTROL then raw_error(e[1], 0) end
  if is_control(e) then raw_error(e, 0) end
  return false, e
end
G.xpcall = function(f, handler, ...)
  if type(handler) ~= 'function' then
    raw_error("bad argument #2 to 'xpcall' (function expected, got " .. (handler == nil and 'no value' or type(handler)) .. ')', 2)
  end
  return xpass(raw_xpcall(f, function(e)
    if is_control(e) then return raw_setmetatable({ e }, CONTROL) end
    return handler(normalize(e))
  end, ...))
end

-- The same seed repeats a run byte for byte (docs/language.md, "Determinism"): tostring and
-- string.format name tables and functions by a per-VM counter, never by address; %p is refused.
local raw_tostring, raw_match, raw_format, raw_find, raw_get = tostring, string.match, string.format, string.find, rawget
local ids, last_id = raw_setmetatable({}, { __mode = 'k' }), 0
local HAS_ADDRESS = { table = true, ['function'] = true, userdata = true, thread = true }
tostring = function(...)
  if select('#', ...) == 0 then raw_error("bad argument #1 to 'tostring' (value expected)", 2) end
  local v = ...
  local s = raw_tostring(v)
  if HAS_ADDRESS[type(v)] then
    local prefix = raw_match(s, '^(.*): 0x%x+$')
    if prefix then
      local id = ids[v]
      if not id then last_id = last_id + 1; id = last_id; ids[v] = id end
      return raw_format('%s: 0x%08x', prefix, id)
    end
  end
  return s
end
G.tostring = tostring
-- Only arguments that feed a `%s` are named by the counter: any other conversion gets the value
-- itself, so a table given to `%d` or `%q` raises Lua's own error ("no literal"). The format is
-- walked spec by spec, so `%%p` (a percent sign, then p) is not taken for `%p`.
-- Lua's own errors from format are raised again at the caller's level, named as Lua names them
-- (called through pcall, format has no name of its own and says '?').
local raw_select, raw_gsub = select, string.gsub
local function formatted(ok, ...)
  if ok then return ... end
  local e = ...
  if type(e) == 'string' then e = raw_gsub(e, "^bad argument #(%d+) to '%?'", "bad argument #%1 to 'format'") end
  raw_error(e, 2)
end
string.format = function(fmt, ...)
  if type(fmt) ~= 'string' then return formatted(raw_pcall(raw_format, fmt, ...)) end
  local n, has_p = raw_select('#', ...), raw_find(fmt, 'p', 1, true)
  local addressed = false
  for i = 1, n do
    if HAS_ADDRESS[type((raw_select(i, ...)))] then addressed = true; break end
  end
  if not (addressed or has_p) then return formatted(raw_pcall(raw_format, fmt, ...)) end
  local args, i, arg = nil, 1, 0
  while true do
    local s = raw_find(fmt, '%', i, true)
    if not s then break end
    local spec, conv = raw_match(fmt, '^([-+ #0]*%d*%.?%d*)(.?)', s + 1)
    if conv == '%' and spec == '' then
      i = s + 2
    else
      -- A %p Lua would accept (flag '-', a width) is refused; any other is Lua's invalid conversion.
      if conv == 'p' and raw_find(spec, '^%-?%d?%d?$') then
        raw_error("bad argument #1 to 'format' (%p is not available: addresses differ between runs)", 2)
      end
      arg = arg + 1
      if conv == 's' and arg <= n and HAS_ADDRESS[type((raw_select(arg, ...)))] then
        args = args or { ... }
        args[arg] = tostring(args[arg])
      end
      i = s + 2 + #spec
    end
  end
  if args then return formatted(raw_pcall(raw_format, fmt, table.unpack(args, 1, n))) end
  return formatted(raw_pcall(raw_format, fmt, ...))
end
-- math.frexp of an infinity or NaN answers (x, 0), as C's frexp leaves the exponent unset there.
local frexp, huge = math.frexp, math.huge
math.frexp = function(x)
  if x ~= x or x == huge or x == -huge then return x, 0 end
  return frexp(x)
end

-- _G's metatable belongs to the Engine: `prose` and `argv` are not raw globals, they resolve
-- here. A prompt's own setmetatable(_G, mt) is kept aside and consulted for every other miss,
-- so `__index` defaults and strict-mode metatables behave as the author wrote them.
local user_mt = nil
-- In the H1 pass argv is an ordinary value the H1 blocks may repair; the Engine freezes what
-- it holds when the pass ends. After that, sections read the frozen argv through Rust.
local h1 = E.h1
local argv_value = h1 and E.argv_initial() or nil
local argv_frozen = E.argv_frozen
local prose_get = E.prose
local G_MT = {}
G_MT.__index = function(t, k)
  if k == 'prose' then
    local ok, a, b = prose_get()
    if ok then return a end
    local e = make_error('lua', b)
    substitution_errors[e] = true
    raw_error(e, 0)
  end
  if k == 'argv' then
    if h1 then return argv_value end
    return check(argv_frozen())
  end
  local mt = user_mt
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
  if k == 'prose' then raise('lua', 'prose is read-only: it is the rendered prose above the current block') end
  local mt = user_mt
  if mt ~= nil then
    local h = mt.__newindex
    if type(h) == 'function' then return h(t, k, v) end
    if h ~= nil then h[k] = v; return end
  end
  raw_set(t, k, v)
end
raw_setmetatable(G, G_MT)

G.setmetatable = function(t, mt)
  if t == G then
    if mt ~= nil and type(mt) ~= 'table' then
      raw_error("bad argument #2 to 'setmetatable' (nil or table expected)", 2)
    end
    if user_mt ~= nil and user_mt.__metatable ~= nil then
      raw_error('cannot change a protected metatable', 2)
    end
    user_mt = mt
    return t
  end
  if type(t) ~= 'table' then raw_error("bad argument #1 to 'setmetatable' (table expected, got " .. type(t) .. ')', 2) end
  if mt ~= nil and type(mt) ~= 'table' then
    raw_error("bad argument #2 to 'setmetatable' (nil or table expected, got " .. type(mt) .. ')', 2)
  end
  -- No finalizers (docs/language.md): a __gc would run at a time the prompt does not control,
  -- outside the block, even after the run. Lua marks an object for finalization only here.
  if mt ~= nil and raw_get(mt, '__gc') ~= nil then
    raw_error('setmetatable: __gc finalizers are not available in Runvil; release resources explicitly', 2)
  end
  if raw_getmetatable(t) ~= nil and not raw_pcall(raw_setmetatable, t, mt) then
    raw_error('cannot change a protected metatable', 2)
  end
  return raw_setmetatable(t, mt)
end
G.getmetatable = function(...)
  if select('#', ...) == 0 then raw_error("bad argument #1 to 'getmetatable' (value expected)", 2) end
  local t = ...
  if t == G then
    if user_mt == nil then return nil end
    local protected = user_mt.__metatable
    if protected ~= nil then return protected end
    return user_mt
  end
  return raw_getmetatable(t)
end

-- A sealed table: reads go to `get` (a Rust function answering in the check convention),
-- writes and metatable changes are refused.
local function sealed(name, get)
  return raw_setmetatable({}, {
    __index = function(_, k) return check(get(k)) end,
    __newindex = function(_, k) raise('lua', name .. " is sealed; cannot set '" .. tostring(k) .. "'") end,
    __metatable = name .. ' is sealed',
  })
end
G.sys = sealed('sys', E.sys_get)
local prompt_get, prompt_list = E.prompt_get, E.prompt_list
local function list(heading) return check(prompt_list(heading)) end
G.prompt = sealed('prompt', function(k)
  if k == 'list' then return true, list end
  return prompt_get(k)
end)
G.ui = sealed('ui', E.ui_get)

-- var: proxies over the walk's JSON value, so every write, at any depth, is checked at the
-- assigning line. Rust builds the proxies with these metamethods.
local var_mt_fns = {
  index = function(t, k) return check(E.var_index(t, k)) end,
  newindex = function(t, k, v) return check(E.var_newindex(t, k, v)) end,
  len = function(t) return check(E.var_len(t)) end,
  -- A snapshot of the keys taken now; each step reads through the proxy, skipping keys removed
  -- since.
  pairs = function(t)
    local keys, i = check(E.var_pairs(t)), 0
    return function()
      while true do
        i = i + 1
        local k = keys[i]
        if k == nil then return nil end
        local v = t[k]
        if v ~= nil then return k, v end
      end
    end, t, nil
  end,
}

G.json = {
  null = E.json_null,
  array = E.json_array,
  encode = function(v) return check(E.json_encode(v)) end,
  decode = function(s) return check(E.json_decode(s)) end,
}
-- store: the eight calls; each suspends while the store answers.
local store = {}
for _, name in next, { 'write', 'append', 'read', 'read_numbered', 'str_replace', 'delete', 'exists', 'glob' } do
  local call = E['store_' .. name]
  store[name] = function(...) return check(call(...)) end
end
G.store = store

G.log = function(message) return check(E.log(message)) end
G.untrusted = function(s) return check(E.untrusted(s)) end

-- Names of features not built yet. Calling them is a clear error, never a silent no-op.
local function unavailable_fn(name)
  return function() raise('lua', name .. ' is not available in this version of Runvil') end
end
local function unavailable_table(name, present)
  return raw_setmetatable(present or {}, {
    __index = function(_, k) return unavailable_fn(name .. '.' .. tostring(k)) end,
    __newindex = function(_, k) raise('lua', name .. " is sealed; cannot set '" .. tostring(k) .. "'") end,
    __metatable = name .. ' is sealed',
  })
end
G.compactors = unavailable_table('compactors')

-- Control flow (DECISIONS.md, "Runs, walks and chains"). `jump` unwinds the block as a control
-- signal no pcall catches; `call` and the waiting `tasks` functions suspend while other chains run.
local jump_to = E.jump
G.jump = function(target) check(jump_to(target)) end
local call_chain = E.call
G.call = function(target, input) return check(call_chain(target, input)) end

-- require: the library's blocks run here, in the requiring VM, each over its own prose; the
-- caller's prose is set aside meanwhile. Loaded once per VM.
local require_find, prose_push, prose_pop = E.require_find, E.prose_push, E.prose_pop
local loaded = {}
G.require = function(target)
  local index, chunks = check(require_find(target))
  local hit = loaded[index]
  if hit then return hit[1] end
  local value
  for i = 1, #chunks do
    prose_push(chunks[i][2])
    local ok, v = raw_pcall(chunks[i][1])
    prose_pop()
    if not ok then raw_error(v, 0) end
    if v ~= nil then value = v; break end
  end
  loaded[index] = { value }
  return value
end

-- tasks: handles are read-only tables the Engine knows by id; results carry `ok`, `text`,
-- `item`, `exhausted` and `error`, and `tostring` gives `text`.
local RESULT = { __name = 'task result' }
RESULT.__tostring = function(r) return r.text end
local function wrap_result(r)
  local e = r.error
  if e ~= nil then r.error = make_error(e.kind, e.message, e) end
  return raw_setmetatable(r, RESULT)
end
local function wrap_results(list)
  for i = 1, #list do wrap_result(list[i]) end
  return list
end
local handle_ids = raw_setmetatable({}, { __mode = 'k' })
local task_status, task_cancel = E.task_status, E.task_cancel
local function make_handle(id, target)
  local fields = {
    id = id,
    target = target,
    status = function() return check(task_status(id)) end,
    cancel = function() return check(task_cancel(id)) end,
  }
  local h = raw_setmetatable({}, {
    __index = fields,
    __newindex = function(_, k) raise('lua', "a task handle is read-only; cannot set '" .. tostring(k) .. "'") end,
    __tostring = function() return 'task ' .. id end,
    __metatable = 'task handle',
  })
  handle_ids[h] = id
  return h
end
local function ids_of(fname, handles)
  if type(handles) ~= 'table' then
    raise('lua', fname .. ' takes a list of task handles, got ' .. type(handles))
  end
  local ids = {}
  for i = 1, #handles do
    local id = handle_ids[handles[i]]
    if id == nil then raise('lua', fname .. ': item ' .. i .. ' is not a task handle') end
    ids[i] = id
  end
  return ids
end
local spawn, join, join_any, fanout = E.tasks_spawn, E.tasks_join, E.tasks_join_any, E.tasks_fanout
G.tasks = raw_setmetatable({}, {
  __index = {
    spawn = function(target, opts) return make_handle(check(spawn(target, opts))) end,
    join = function(handles, opts)
      local ids = ids_of('tasks.join', handles)
      local timeout = nil
      if opts ~= nil then
        if type(opts) ~= 'table' then raise('lua', 'tasks.join options must be a table, got ' .. type(opts)) end
        timeout = opts.timeout_ms
      end
      return wrap_results(check(join(ids, timeout)))
    end,
    join_any = function(handles)
      local r, i = check(join_any(ids_of('tasks.join_any', handles)))
      return wrap_result(r), handles[i]
    end,
    fanout = function(worker, collection) return wrap_results(check(fanout(worker, collection))) end,
  },
  __newindex = function(_, k) raise('lua', "tasks is sealed; cannot set '" .. tostring(k) .. "'") end,
  __metatable = 'tasks is sealed',
})

-- tools and packs (chapter 002). Local tool handlers stay here, as Lua functions, and run on the
-- calling coroutine under the Engine's pcall: a handler can suspend, and whatever it raises
-- reaches the caller unchanged.
local engine_pcall = G.pcall
local handlers = {}
local function run_local(alias, args, call_id, turn)
  E.local_begin(alias)
  local ok, v = engine_pcall(handlers[alias], args)
  if not ok then
    check(E.local_end(alias, call_id, turn, true, nil))
    raw_error(v, 0)
  end
  return check(E.local_end(alias, call_id, turn, false, v))
end

local tools = {}
tools.get = function(id) return check(E.tools_get(id)) end
tools.required = function() return check(E.tools_list(true)) end
tools.extras = function() return check(E.tools_list(false)) end
tools.offer = function(...) return check(E.tools_offer(...)) end
tools.offer_local = function(alias, description, params, handler)
  check(E.tools_offer_local(alias, description, params, handler))
  handlers[alias] = handler
end
tools.call = function(tool, args)
  local is_local, a, b, c = check(E.tools_resolve(tool, args))
  if is_local then return run_local(a, b, '', nil) end
  return check(E.tool(a, b, c))
end
-- The model's task built-ins (effects/task_builtins.rs) join the section's rounds from now on.
tools.allow_tasks = function(targets)
  if targets ~= nil then
    if type(targets) ~= 'table' then
      raise('lua', 'tools.allow_tasks targets must be a list of section headings, got ' .. type(targets))
    end
    local n = 0
    for _, t in ipairs(targets) do
      if type(t) ~= 'string' then
        raise('lua', 'tools.allow_tasks targets must be section heading strings, got ' .. (math.type(t) or type(t)))
      end
      if not t:find('%S') then raise('lua', 'tools.allow_tasks targets must be non-empty section headings') end
      n = n + 1
    end
    if n == 0 then
      raise('lua', 'tools.allow_tasks targets must name at least one section; call it with no argument to allow any section')
    end
  end
  check(E.tools_allow_tasks(targets))
end
local calls_active, calls_get = E.calls_active, E.calls_get
local calls_view = raw_setmetatable({}, {
  __index = function(_, k) return check(calls_get(k)) end,
  __newindex = function() raise('lua', 'tools.calls is read-only') end,
  __metatable = 'tools.calls is read-only',
})
G.tools = raw_setmetatable(tools, {
  __index = function(_, k)
    if k == 'calls' then
      if calls_active() then return calls_view end
      return nil
    end
    return nil
  end,
})

local packs = {}
packs.get = function(name) return check(E.packs_get(name)) end
packs.required = function() return check(E.packs_list(true)) end
packs.extras = function() return check(E.packs_list(false)) end
packs.offer = function(...) check(E.packs_offer(...)) end
G.packs = packs

G.messages = E.messages

local models = {}
local infer = E.infer
models.infer = function(p) return check(infer(p)) end
-- models.get(role): a frozen handle whose infer runs one round on that role.
models.get = function(role) return check(E.model_handle(role)) end
E.register_model_infer(function(handle, p) return check(infer(p, handle.role)) end)
models.use = function(role) return check(E.models_use(role)) end
models.default = function(role) return check(E.models_default(role)) end
-- models.loop: rounds until the model answers with text. Rust runs the model rounds and the
-- catalog calls; local tool calls run here, one at a time, in the model's order.
models.loop = function()
  check(E.loop_start())
  while true do
    local final, n = check(E.round())
    if final then return n end
    local i = 1
    while i <= n do
      local is_local, alias, args, id, turn = check(E.loop_call(i))
      if is_local then
        local ok, v = engine_pcall(run_local, alias, args, id, turn)
        if not ok then
          E.loop_abort()
          raw_error(v, 0)
        end
        check(E.loop_set(i, v))
        i = i + 1
      else
        i = check(E.batch(i))
      end
    end
    check(E.loop_finish())
  end
end
G.models = unavailable_table('models', models)

-- Pack preludes (chapter 002, "Pack preludes"). Each declared Pack's prelude runs in an
-- environment of its own that sees only a small set of globals; what it assigns is checked
-- against the reserved names (all of a prelude's globals, in byte order) and installs into _G,
-- tables as sealed proxies.
local ENGINE_GLOBALS = {}
for _, n in next, E.engine_globals do ENGINE_GLOBALS[n] = true end
local STD_GLOBALS = {}
for _, n in next, { 'assert', 'error', 'getmetatable', 'ipairs', 'next', 'pairs', 'pcall', 'select',
  'setmetatable', 'tonumber', 'tostring', 'type', 'xpcall', 'string', 'table', 'math', 'utf8', '_G', '_VERSION',
  'load', 'dofile', 'loadfile', 'print', 'rawget', 'rawset', 'rawequal', 'rawlen', 'collectgarbage', 'coroutine',
  'io', 'os', 'debug', 'package', 'warn' } do
  STD_GLOBALS[n] = true
end
local KEYWORDS = {}
for _, n in next, { 'and', 'break', 'do', 'else', 'elseif', 'end', 'false', 'for', 'function', 'global', 'goto',
  'if', 'in', 'local', 'nil', 'not', 'or', 'repeat', 'return', 'then', 'true', 'until', 'while' } do
  KEYWORDS[n] = true
end
local raw_sort, raw_concat = table.sort, table.concat
local prelude_owner = {}

local function seal(name, pack, t)
  return raw_setmetatable({}, {
    __index = t,
    __newindex = function(_, k)
      local shown = type(k) == 'string' and k or (math.type(k) == 'integer' and tostring(k) or type(k))
      raise('lua', name .. ' is read-only: Pack `' .. pack .. '` defines it; cannot set \'' .. shown .. '\'')
    end,
    __metatable = name .. ' is sealed',
  })
end

local function install_preludes()
  local list = check(E.preludes())
  for i = 1, #list do
    local id, source = list[i][1], list[i][2]
    local view = {
      assert = assert, error = raw_error, getmetatable = G.getmetatable, ipairs = ipairs, next = next,
      pairs = pairs, pcall = G.pcall, select = select, setmetatable = G.setmetatable, tonumber = tonumber,
      tostring = tostring, type = type, xpcall = G.xpcall, string = string, table = table, math = math,
      tools = G.tools, store = G.store, untrusted = G.untrusted, json = G.json, var = check(E.prelude_var()),
    }
    local env = raw_setmetatable({}, { __index = view })
    local fail_load = function(message)
      raise('lua', 'Pack `' .. id .. '`: its prelude failed to load: ' .. tostring(message)
        .. '. A prelude only defines functions; it must not call tools while loading.')
    end
    local compiled, chunk, err = E.load_prelude(source, id, env)
    if not compiled then fail_load(err) end
    E.prelude_loading(true)
    local loaded, e = G.pcall(chunk, id)
    E.prelude_loading(false)
    if not loaded then fail_load(e) end
    local names = {}
    for k in next, env do names[#names + 1] = k end
    raw_sort(names, function(a, b) return tostring(a) < tostring(b) end)
    for _, name in next, names do
      if type(name) ~= 'string' or not utf8.len(name) then
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

-- The block runner: each block is a function run under a raw pcall on the Engine's own
-- coroutine, so an error value keeps its identity and the budget hook can yield to the host.
local function run_block(f, ...) return raw_pcall(f, ...) end

return {
  run_block = run_block,
  argv_value = function() return argv_value end,
  install_preludes = install_preludes,
  has_preludes = function() return #check(E.preludes()) > 0 end,
  var_mt_fns = var_mt_fns,
  is_substitution_error = function(e) return substitution_errors[e] == true end,
  is_error_value = function(e) return raw_getmetatable(e) == ERR end,
  make_error = make_error,
}
