-- A part of the Engine's Lua side that bootstrap.lua loads the first time a block reads one of
-- its globals (lua/chunks.rs). It gets the globals table, `E` and `core` (the helpers and the
-- base functions bootstrap.lua captured before any prompt code ran: a block may have replaced
-- the globals by the time a part loads) and returns what it defines: `globals`, the Engine
-- globals to install, and whatever other parts or bootstrap.lua use.
local G, E, core = ...
local check, raise, make_error = core.check, core.raise, core.make_error
local raw_setmetatable, raw_error, type, ipairs = core.raw_setmetatable, core.raw_error, core.type, core.ipairs
local math_type, find = core.math_type, core.find

-- tools and packs (chapter 002). Local tool handlers stay here, as Lua functions, and run on the
-- calling coroutine under the Engine's pcall: a handler can suspend, and whatever it raises
-- reaches the caller unchanged.
local engine_pcall = core.pcall
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
        raise('lua', 'tools.allow_tasks targets must be section heading strings, got ' .. (math_type(t) or type(t)))
      end
      if not find(t, '%S') then raise('lua', 'tools.allow_tasks targets must be non-empty section headings') end
      n = n + 1
    end
    if n == 0 then
      raise('lua', 'tools.allow_tasks targets must name at least one section; call it with no argument to allow any section')
    end
  end
  check(E.tools_allow_tasks(targets))
end
local calls_view = raw_setmetatable({}, {
  __index = function(_, k) return check(E.calls_get(k)) end,
  __newindex = function() raise('lua', 'tools.calls is read-only') end,
  __metatable = 'tools.calls is read-only',
})
raw_setmetatable(tools, {
  __index = function(_, k)
    if k == 'calls' then
      if E.calls_active() then return calls_view end
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


return { globals = { tools = tools, packs = packs }, run_local = run_local }
