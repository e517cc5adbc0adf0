-- A part of the Engine's Lua side that bootstrap.lua loads the first time a block reads one of
-- its globals (lua/chunks.rs). It gets the globals table, `E` and `core` (the helpers and the
-- base functions bootstrap.lua captured before any prompt code ran: a block may have replaced
-- the globals by the time a part loads) and returns what it defines: `globals`, the Engine
-- globals to install, and whatever other parts or bootstrap.lua use.
--
-- var's proxies: the metamethods Rust builds every proxy over the walk's JSON value with, so
-- every write, at any depth, is checked at the assigning line (a table argv and a prelude's
-- `var` are read-only proxies). Loaded when a block first reads `var` or `argv` (or a prelude
-- gets its `var`), and handed to Rust with that read (`E.var_root(shims)`,
-- `E.argv_frozen(shims)`, `E.prelude_var(shims)`): an entry that reads neither does not load them.
local G, E, core = ...
local check, type, raw_get, raw_set, raw_getmetatable = core.check, core.type, core.raw_get, core.raw_set, core.raw_getmetatable
local next = core.next

-- `next` sees what a proxy shows, as `#`, ipairs and pairs do. A proxy's metatable is guarded by
-- a string, so only tables whose getmetatable is a string pay the question to Rust. Installed when
-- the proxies load (the first read of var or argv), unless a block has put its own `next` there.
if raw_get(G, 'next') == next then
  raw_set(G, 'next', function(t, k)
    if type(raw_getmetatable(t)) == 'string' then
      local is_proxy, nk, nv = check(E.var_next(t, k))
      if is_proxy then return nk, nv end
    end
    local nk, nv = next(t, k)
    return nk, nv
  end)
end

return {
  shims = {
    index = function(t, k) return check(E.var_index(t, k)) end,
    newindex = function(t, k, v) return check(E.var_newindex(t, k, v)) end,
    len = function(t) return check(E.var_len(t)) end,
    -- A snapshot of the keys taken now; each step reads through the proxy, skipping keys
    -- removed since.
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
  },
}
