-- A part of the Engine's Lua side that bootstrap.lua loads the first time a block reads one of
-- its globals (lua/chunks.rs). It gets the globals table, `E` and `core` (the helpers and the
-- base functions bootstrap.lua captured before any prompt code ran: a block may have replaced
-- the globals by the time a part loads) and returns what it defines: `globals`, the Engine
-- globals to install, and whatever other parts or bootstrap.lua use.
local G, E, core = ...
local check, raise, make_error = core.check, core.raise, core.make_error
local raw_setmetatable, type, tostring = core.raw_setmetatable, core.type, core.tostring

-- tasks: handles are read-only tables the Engine knows by id; results carry `ok`, `text`,
-- `item`, `exhausted` and `error`, and `tostring` gives `text`.
-- Protected, as bootstrap.lua's ERR: no prompt may give it a `__gc`.
local RESULT = { __name = 'task result', __metatable = 'task result' }
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
local function make_handle(id, target)
  local fields = {
    id = id,
    target = target,
    status = function() return check(E.task_status(id)) end,
    cancel = function() return check(E.task_cancel(id)) end,
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
local tasks = raw_setmetatable({}, {
  __index = {
    spawn = function(target, opts) return make_handle(check(E.tasks_spawn(target, opts))) end,
    join = function(handles, opts)
      local ids = ids_of('tasks.join', handles)
      local timeout = nil
      if opts ~= nil then
        if type(opts) ~= 'table' then raise('lua', 'tasks.join options must be a table, got ' .. type(opts)) end
        timeout = opts.timeout_ms
      end
      return wrap_results(check(E.tasks_join(ids, timeout)))
    end,
    join_any = function(handles)
      local r, i = check(E.tasks_join_any(ids_of('tasks.join_any', handles)))
      return wrap_result(r), handles[i]
    end,
    fanout = function(worker, collection) return wrap_results(check(E.tasks_fanout(worker, collection))) end,
  },
  __newindex = function(_, k) raise('lua', "tasks is sealed; cannot set '" .. tostring(k) .. "'") end,
  __metatable = 'tasks is sealed',
})


return { globals = { tasks = tasks } }
