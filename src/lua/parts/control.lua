-- A part of the Engine's Lua side that bootstrap.lua loads the first time a block reads one of
-- its globals (lua/chunks.rs). It gets the globals table, `E` and `core` (the helpers and the
-- base functions bootstrap.lua captured before any prompt code ran: a block may have replaced
-- the globals by the time a part loads) and returns what it defines: `globals`, the Engine
-- globals to install, and whatever other parts or bootstrap.lua use.
local G, E, core = ...
local check, raise, make_error = core.check, core.raise, core.make_error
local raw_pcall, raw_error = core.raw_pcall, core.raw_error

-- Control flow (docs/language.md, "Runs, walks and chains"). `jump` unwinds the block as a control
-- signal no pcall catches; `call` and the waiting `tasks` functions suspend while other chains run.
local function jump(target) check(E.jump(target)) end
local function call(target, input) return check(E.call(target, input)) end

-- require: the library's blocks run here, in the requiring VM, each over its own prose; the
-- caller's prose is set aside meanwhile. Loaded once per VM.
local loaded = {}
local function require(target)
  local index, chunks = check(E.require_find(target))
  local hit = loaded[index]
  if hit then return hit[1] end
  local value
  for i = 1, #chunks do
    E.prose_push(chunks[i][2])
    local ok, v = raw_pcall(chunks[i][1])
    E.prose_pop()
    if not ok then raw_error(v, 0) end
    if v ~= nil then value = v; break end
  end
  loaded[index] = { value }
  return value
end


return { globals = { jump = jump, call = call, require = require } }
