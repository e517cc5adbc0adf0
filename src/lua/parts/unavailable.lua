-- A part of the Engine's Lua side that bootstrap.lua loads the first time a block reads one of
-- its globals (lua/chunks.rs). It gets the globals table, `E` and `core` (the helpers and the
-- base functions bootstrap.lua captured before any prompt code ran: a block may have replaced
-- the globals by the time a part loads) and returns what it defines: `globals`, the Engine
-- globals to install, and whatever other parts or bootstrap.lua use.
--
-- Names of features not built yet (`compactors`, the rest of `models`): calling them is a clear
-- error, never a silent no-op. Its own part, loaded by the two parts that use it, so that neither
-- every entry (bootstrap.lua) nor a block that only asks a model (the `basics` part) loads it.
local G, E, core = ...
local raise, raw_setmetatable, tostring = core.raise, core.raw_setmetatable, core.tostring

local function unavailable_fn(name)
  return function() raise('lua', name .. ' is not available in this version of Runvil') end
end

return {
  -- `present` (or a new table) sealed: reading a name it lacks gives a function that raises.
  table = function(name, present)
    return raw_setmetatable(present or {}, {
      __index = function(_, k) return unavailable_fn(name .. '.' .. tostring(k)) end,
      __newindex = function(_, k) raise('lua', name .. " is sealed; cannot set '" .. tostring(k) .. "'") end,
      __metatable = name .. ' is sealed',
    })
  end,
}
