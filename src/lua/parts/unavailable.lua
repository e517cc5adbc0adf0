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
  -- `present` (or a new table) sealed. Reading one of `planned`, the names the language has and
  -- this version does not build yet, gives a function that says so when called; reading any
  -- other name it lacks is a typo and raises at once, listing what there is.
  table = function(name, present, planned)
    present = present or {}
    local is_planned = {}
    for _, k in core.ipairs(planned) do is_planned[k] = true end
    local function known()
      local names = {}
      for k in core.next, present do names[#names + 1] = tostring(k) end
      for k in core.next, is_planned do names[#names + 1] = k end
      core.std.table.sort(names)
      return core.std.table.concat(names, ', ')
    end
    return raw_setmetatable(present, {
      __index = function(_, k)
        if is_planned[k] then return unavailable_fn(name .. '.' .. tostring(k)) end
        raise('lua', name .. " has no field '" .. tostring(k) .. "' (its fields: " .. known() .. ')')
      end,
      __newindex = function(_, k) raise('lua', name .. " is sealed; cannot set '" .. tostring(k) .. "'") end,
      __metatable = name .. ' is sealed',
    })
  end,
}
