-- A part of the Engine's Lua side that bootstrap.lua loads the first time a block reads one of
-- its globals (lua/chunks.rs). It gets the globals table, `E` and `core` (the helpers and the
-- base functions bootstrap.lua captured before any prompt code ran: a block may have replaced
-- the globals by the time a part loads) and returns what it defines: `globals`, the Engine
-- globals to install, and whatever other parts or bootstrap.lua use.
--
-- The everyday Engine globals: json, store, log, untrusted, sys, prompt, ui, messages and
-- compactors. Most blocks use one or two of them, and many (fall-through sections, pure
-- computation) none: built here, on first read, they cost an entry nothing until then.
local G, E, core = ...
local check, raise = core.check, core.raise
local raw_setmetatable, tostring, next = core.raw_setmetatable, core.tostring, core.next

-- A sealed table: reads go to `get` (a Rust function answering in the check convention),
-- writes and metatable changes are refused.
local function sealed(name, get)
  return raw_setmetatable({}, {
    __index = function(_, k) return check(get(k)) end,
    __newindex = function(_, k) raise('lua', name .. " is sealed; cannot set '" .. tostring(k) .. "'") end,
    __metatable = name .. ' is sealed',
  })
end
local function list(heading) return check(E.prompt_list(heading)) end
local compactors, COMPACTORS_PLANNED = {}, { 'clear' }

-- store: the eight calls; each suspends while the store answers.
local store = {}
for _, name in next, { 'write', 'append', 'read', 'read_numbered', 'str_replace', 'delete', 'exists', 'glob' } do
  local key = 'store_' .. name
  store[name] = function(...) return check(E[key](...)) end
end

return { globals = {
  json = {
    null = E.json_null,
    array = function(...) return check(E.json_array(...)) end,
    encode = function(v) return check(E.json_encode(v)) end,
    decode = function(s) return check(E.json_decode(s)) end,
  },
  store = store,
  log = function(message) return check(E.log(message)) end,
  untrusted = function(s) return check(E.untrusted(s)) end,
  sys = sealed('sys', function(k) return E.sys_get(k) end),
  prompt = sealed('prompt', function(k)
    if k == 'list' then return true, list end
    return E.prompt_get(k)
  end),
  ui = sealed('ui', function(k) return E.ui_get(k) end),
  messages = check(E.messages_object()),
  -- Sealed as `models` is in the models part: the `unavailable` part answers a read of a name
  -- it lacks, or any write, and loads only then.
  compactors = raw_setmetatable(compactors, {
    __index = function(_, k) return core.part('unavailable').missing('compactors', compactors, COMPACTORS_PLANNED, k) end,
    __newindex = function(_, k) core.part('unavailable').refuse('compactors', k) end,
    __metatable = 'compactors is sealed',
  }),
} }
