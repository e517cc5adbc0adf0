-- A part of the Engine's Lua side that bootstrap.lua loads the first time a block reads one of
-- its globals (lua/chunks.rs). It gets the globals table, `E` and `core` (the helpers and the
-- base functions bootstrap.lua captured before any prompt code ran: a block may have replaced
-- the globals by the time a part loads) and returns what it defines: `globals`, the Engine
-- globals to install, and whatever other parts or bootstrap.lua use.
--
-- Names of features not built yet (`compactors`, the rest of `models`): calling them is a clear
-- error, never a silent no-op. Its own part, loaded by the metatable of `models` (the models
-- part) or `compactors` (the basics part) the first time a block reads a name the table lacks or
-- writes to it, so that neither every entry nor a block that only uses what is built (a fanout
-- arm asking a model) loads it.
local G, E, core = ...
local raise, tostring = core.raise, core.tostring

local function unavailable_fn(name)
  return function() raise('lua', name .. ' is not available in this version of Runvil') end
end

-- What a sealed Engine table does on a read of a name it lacks and on any write.
return {
  -- Reading one of `planned`, the names the language has and this version does not build yet,
  -- gives a function that says so when called; reading any other name `present` lacks is a typo
  -- and raises at once, listing what there is.
  missing = function(name, present, planned, k)
    for _, p in core.ipairs(planned) do
      if p == k then return unavailable_fn(name .. '.' .. tostring(k)) end
    end
    local names = {}
    for key in core.next, present do names[#names + 1] = tostring(key) end
    for _, p in core.ipairs(planned) do names[#names + 1] = p end
    core.std.table.sort(names)
    raise('lua', name .. " has no field '" .. tostring(k) .. "' (its fields: " .. core.std.table.concat(names, ', ') .. ')')
  end,
  refuse = function(name, k) raise('lua', name .. " is sealed; cannot set '" .. tostring(k) .. "'") end,
}
