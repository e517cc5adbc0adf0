-- A part of the Engine's Lua side that bootstrap.lua loads the first time a block reads one of
-- its globals (lua/chunks.rs). It gets the globals table, `E` and `core` (the helpers and the
-- base functions bootstrap.lua captured before any prompt code ran: a block may have replaced
-- the globals by the time a part loads) and returns what it defines: `globals`, the Engine
-- globals to install, and whatever other parts or bootstrap.lua use.
local G, E, core = ...
local check, raise, make_error = core.check, core.raise, core.make_error
local raw_error = core.raw_error
-- Local tool handlers live in the tools part, loaded only when a round calls one.
local engine_pcall, part = core.pcall, core.part

local models = {}
models.infer = function(p) return check(E.infer(p)) end
-- models.get(role): a frozen handle whose infer runs one round on that role.
-- Every model handle's `infer` field answers `infer_method` (lua/models_api.rs keeps it, given
-- with the first handle).
local function infer_method(handle, p) return check(E.infer(p, handle.role)) end
models.get = function(role) return check(E.model_handle(role, infer_method)) end
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
        local ok, v = engine_pcall(part('tools').run_local, alias, args, id, turn)
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
-- Sealed: a read of a name models lacks, or any write, is answered by the `unavailable` part,
-- loaded only then (an arm that asks a model never loads it). The same seal as `compactors`' in
-- the basics part: each part has its own, so that neither loads the other.
local PLANNED = { 'compact', 'need' }
return { globals = { models = core.raw_setmetatable(models, {
  __index = function(_, k) return part('unavailable').missing('models', models, PLANNED, k) end,
  __newindex = function(_, k) part('unavailable').refuse('models', k) end,
  __metatable = 'models is sealed',
}) } }

