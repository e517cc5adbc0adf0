-- A part of the Engine's Lua side that bootstrap.lua loads the first time a block reads one of
-- its globals (lua/chunks.rs). It gets the globals table, `E` and `core` (the helpers and the
-- base functions bootstrap.lua captured before any prompt code ran: a block may have replaced
-- the globals by the time a part loads) and returns what it defines: `globals`, the Engine
-- globals to install, and whatever other parts or bootstrap.lua use.
--
-- The guarded base functions xpcall, setmetatable and getmetatable. Few blocks call them, and
-- each function here is one more for every section entry to load, and entries must stay cheap
-- (docs/performance.md, "One section entry"). `pcall` stays in bootstrap.lua, which needs it.
local G, E, core = ...
local normalize, shared = core.normalize, core.shared
local raw_error, raw_pcall, raw_xpcall = core.raw_error, core.raw_pcall, core.raw_xpcall
local raw_setmetatable, raw_getmetatable, raw_get = core.raw_setmetatable, core.raw_getmetatable, core.raw_get
local type, select = core.type, core.select

-- Control flow (`jump`, a task's cancellation) must pass through a handler untouched: the
-- handler wraps it in a CONTROL box, and xpass raises it again once xpcall has returned.
local CONTROL = {}
local function xpass(ok, ...)
  if ok then return true, ... end
  local e = ...
  if raw_getmetatable(e) == CONTROL then raw_error(e[1], 0) end
  if E.is_control(e) then raw_error(e, 0) end
  return false, e
end
local function xpcall(f, handler, ...)
  if type(handler) ~= 'function' then
    raw_error("bad argument #2 to 'xpcall' (function expected, got " .. (handler == nil and 'no value' or type(handler)) .. ')', 2)
  end
  return xpass(raw_xpcall(f, function(e)
    if E.is_control(e) then return raw_setmetatable({ e }, CONTROL) end
    return handler(normalize(e))
  end, ...))
end

-- `_G`'s own metatable is the Engine's (lazy globals, argv, prose): a block's metatable for `_G`
-- is kept in `shared.user_mt` and consulted after the Engine's.
local function setmetatable(t, mt)
  if t == G then
    if mt ~= nil and type(mt) ~= 'table' then
      raw_error("bad argument #2 to 'setmetatable' (nil or table expected)", 2)
    end
    local user_mt = shared.user_mt
    if user_mt ~= nil and user_mt.__metatable ~= nil then
      raw_error('cannot change a protected metatable', 2)
    end
    shared.user_mt = mt
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
local function getmetatable(...)
  if select('#', ...) == 0 then raw_error("bad argument #1 to 'getmetatable' (value expected)", 2) end
  local t = ...
  if t == G then
    local user_mt = shared.user_mt
    if user_mt == nil then return nil end
    local protected = user_mt.__metatable
    if protected ~= nil then return protected end
    return user_mt
  end
  return raw_getmetatable(t)
end

return { globals = { xpcall = xpcall, setmetatable = setmetatable, getmetatable = getmetatable } }
