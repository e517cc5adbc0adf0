//! The control-flow Engine functions: `jump`, `call`, `require`'s loader and the `tasks`
//! namespace. They marshal arguments and results; the chains themselves are `effects::chains`,
//! the walk is the engine's.

use mlua::{IntoLuaMulti, Lua, MultiValue, Table, Value};
use serde_json::Value as Json;
use std::rc::Rc;

use super::env::{fail, ok, Answer, Args, Env, Marks};
use super::source::load_text;
use super::values::convert;
use crate::effects::chains::{self, ChainStart, Delivered, Worker};
use crate::effects::context::EntryCtx;
use crate::effects::tasks::{first_finished, Starter, Task};
use crate::error::{ErrorValueKind, RunError, RunErrorKind};

/// Resolves a heading reference among the sections visible from the entry (`what` names the
/// function in the not-found message).
fn target(ctx: &EntryCtx, what: &str, reference: &Value) -> Result<usize, String> {
    let Value::String(r) = reference else {
        return Err(format!("{what} takes a section heading, got {}", convert::lua_type(reference)));
    };
    ctx.run.prompt.resolve_for(ctx.section, what, &r.to_string_lossy())
}

/// `jump(target)`: the walk goes on at `target` once this block unwinds. The unwinding is a
/// control signal (`is_control`): no `pcall` stops it.
pub fn jump(lua: &Lua, env: &Env, reference: &Value) -> Answer {
    let ctx = &env.ctx;
    if ctx.loading_shared() {
        let message = "jump is not available during shared library load";
        ctx.run.stop_with(RunError::new(RunErrorKind::Lua, message).in_section(&ctx.heading()));
        return fail(lua, ErrorValueKind::Lua, message);
    }
    if ctx.scope().handler_depth > 0 {
        return fail(
            lua,
            ErrorValueKind::Lua,
            "jump is unavailable inside a local tool handler: return a value from the handler and call jump from the block after the tool call returns",
        );
    }
    match target(ctx, "jump", reference) {
        Ok(i) => {
            ctx.jump(i);
            fail(lua, ErrorValueKind::Lua, "jump")
        }
        Err(m) => fail(lua, ErrorValueKind::Lua, m),
    }
}

/// `require`'s loader: the library section's blocks compiled in this VM, each with its prose
/// (`{ {fn, prose}, ... }`), and the section's index (the per-VM cache key).
pub fn require_find(lua: &Lua, env: &Env, reference: &Value) -> Answer {
    let ctx = &env.ctx;
    let i = match target(ctx, "require", reference) {
        Ok(i) => i,
        Err(m) => return fail(lua, ErrorValueKind::Lua, m),
    };
    let section = &ctx.run.prompt.sections[i];
    let chunks = lua.create_table()?;
    for (n, block) in section.body.blocks.iter().enumerate() {
        let f = match load_text(lua, &block.lua.code, block.lua.line, &section.heading) {
            Ok(f) => f,
            Err(mlua::Error::SyntaxError { message, .. }) => return fail(lua, ErrorValueKind::Lua, message),
            Err(e) => return Err(e),
        };
        let pair = lua.create_table()?;
        pair.raw_set(1, f)?;
        pair.raw_set(2, block.prose.as_str())?;
        chunks.raw_set(n + 1, pair)?;
    }
    ok(lua, (i, chunks))
}

/// A library block's prose replaces the caller's while it runs (`prose_pop` restores it).
pub fn prose_push(lua: &Lua, env: &Env, raw: &Value) -> Answer {
    let raw = match raw {
        Value::String(s) => s.to_string_lossy(),
        _ => String::new(),
    };
    env.ctx.prose.push(raw);
    ok(lua, ())
}

pub fn prose_pop(lua: &Lua, env: &Env) -> Answer {
    env.ctx.prose.pop();
    ok(lua, ())
}

/// An optional input string (`call`'s second argument, `opts.input`); numbers convert.
fn input_arg(lua: &Lua, what: &str, v: &Value) -> Result<Option<String>, String> {
    match v {
        Value::Nil => Ok(None),
        Value::String(s) => Ok(Some(s.to_string_lossy())),
        Value::Integer(_) | Value::Number(_) => Ok(lua.coerce_string(v.clone()).ok().flatten().map(|s| s.to_string_lossy())),
        other => Err(format!("{what} must be a string, got {}", convert::lua_type(other))),
    }
}

/// The answer for a chain that failed: the run's stop goes on as a control signal; any other
/// error is raised at the caller as the same error value.
fn chain_failure(lua: &Lua, ctx: &EntryCtx, e: &RunError) -> Answer {
    if ctx.run.stopped() {
        return fail(lua, ErrorValueKind::Cancelled, e.message.clone());
    }
    raise_value(lua, &chains::error_value(e))
}

/// The check convention's failure for an error value given as JSON fields.
fn raise_value(lua: &Lua, value: &Json) -> Answer {
    let kind = value.get("kind").and_then(Json::as_str).unwrap_or("lua").to_string();
    let message = value.get("message").and_then(Json::as_str).unwrap_or_default().to_string();
    let mut mv: MultiValue = (false, kind, message).into_lua_multi(lua)?;
    if let Json::Object(map) = value {
        let fields = lua.create_table()?;
        for (k, v) in map.iter().filter(|(k, _)| *k != "kind" && *k != "message") {
            fields.raw_set(k.as_str(), convert::to_lua(lua, v, &marks_of(lua)?)?)?;
        }
        mv.push_back(Value::Table(fields));
    }
    Ok(mv)
}

fn marks_of(lua: &Lua) -> mlua::Result<Marks> {
    lua.app_data_ref::<Rc<Env>>().map(|env| env.marks.clone()).ok_or_else(|| mlua::Error::runtime("the VM has no Engine environment"))
}

/// `call(target, input?)`: the chain's result (nil when its walk ran out).
pub async fn call(lua: &Lua, ctx: &Rc<EntryCtx>, a: Args) -> Answer {
    let section = match target(ctx, "call", &a.get(0)) {
        Ok(i) => i,
        Err(m) => return fail(lua, ErrorValueKind::Lua, m),
    };
    let input = match input_arg(lua, "call's input", &a.get(1)) {
        Ok(i) => i,
        Err(m) => return fail(lua, ErrorValueKind::Lua, m),
    };
    match chains::call(ctx, section, input).await {
        Ok(result) => ok(lua, result),
        Err(e) => chain_failure(lua, ctx, &e),
    }
}

/// `tasks.spawn(target, opts?)`: the new task's id and target (bootstrap.lua makes the handle).
pub fn spawn(lua: &Lua, env: &Env, reference: &Value, opts: &Value) -> Answer {
    let ctx = &env.ctx;
    let section = match target(ctx, "tasks.spawn", reference) {
        Ok(i) => i,
        Err(m) => return fail(lua, ErrorValueKind::Lua, m),
    };
    let (input, item) = match opts {
        Value::Nil => (None, None),
        Value::Table(t) => {
            let input = match input_arg(lua, "tasks.spawn's opts.input", &t.raw_get("input")?) {
                Ok(i) => i,
                Err(m) => return fail(lua, ErrorValueKind::Lua, m),
            };
            let item = match t.raw_get::<Value>("item")? {
                Value::Nil => None,
                v => match convert::to_json(&v, &env.marks) {
                    Ok(j) => Some(j),
                    Err(e) => {
                        return fail(lua, ErrorValueKind::Lua, format!("tasks.spawn's opts.item must be JSON data: {}", e.describe()))
                    }
                },
            };
            (input, item)
        }
        other => return fail(lua, ErrorValueKind::Lua, format!("tasks.spawn's options must be a table, got {}", convert::lua_type(other))),
    };
    match chains::spawn(ctx, section, ChainStart { input, item, index: None, worker: None }, Starter::Spawn) {
        Ok(task) => ok(lua, (task.id.clone(), chains::target(&ctx.run, &task))),
        Err(m) => fail(lua, ErrorValueKind::Lua, m),
    }
}

/// The task a handle's id names (bootstrap.lua passes the ids of real handles).
fn task_by_id(ctx: &EntryCtx, id: &Value) -> Result<Rc<Task>, String> {
    let Value::String(s) = id else { return Err(format!("a task handle's id is a string, got {}", convert::lua_type(id))) };
    let id = s.to_string_lossy();
    ctx.run.tasks.get(&id).ok_or_else(|| format!("no task {id} in this run"))
}

/// The tasks a list of handle ids names.
fn tasks_of(ctx: &EntryCtx, ids: &Value) -> Result<Vec<Rc<Task>>, String> {
    let Value::Table(t) = ids else { return Err("tasks.join takes a list of task handles".into()) };
    convert::sequence(t).iter().map(|id| task_by_id(ctx, id)).collect()
}

/// One result table (`ok`, `text`, `item`, `exhausted`, `error` as fields; bootstrap.lua gives it
/// its metatable and makes `error` an error value).
fn result_table(lua: &Lua, marks: &Marks, d: &Delivered) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("ok", d.ok)?;
    t.raw_set("text", d.text.as_str())?;
    if let Some(item) = &d.item {
        t.raw_set("item", convert::to_lua(lua, item, marks)?)?;
    }
    t.raw_set("exhausted", d.exhausted)?;
    if d.running {
        t.raw_set("running", true)?;
    }
    if let Some(e) = &d.error {
        t.raw_set("error", convert::to_lua(lua, e, marks)?)?;
    }
    Ok(t)
}

fn results(lua: &Lua, tasks: &[Rc<Task>]) -> Answer {
    let marks = marks_of(lua)?;
    let list = lua.create_table_with_capacity(tasks.len(), 0)?;
    for (i, task) in tasks.iter().enumerate() {
        list.raw_set(i + 1, result_table(lua, &marks, &chains::delivered(task))?)?;
    }
    ok(lua, list)
}

/// `tasks.join(handles, opts?)`: waits for every task (or until `opts.timeout_ms`), joins the
/// ones that ended, and returns their results in handle order.
pub async fn join(lua: &Lua, ctx: &Rc<EntryCtx>, a: Args) -> Answer {
    let tasks = match tasks_of(ctx, &a.get(0)) {
        Ok(t) => t,
        Err(m) => return fail(lua, ErrorValueKind::Lua, m),
    };
    let timeout = match a.get(1) {
        Value::Nil => None,
        Value::Integer(n) if n >= 0 => Some(n as f64),
        Value::Number(n) if n >= 0.0 && n.is_finite() => Some(n),
        other => {
            return fail(
                lua,
                ErrorValueKind::Lua,
                format!("tasks.join's timeout_ms must be a non-negative number, got {}", convert::lua_type(&other)),
            )
        }
    };
    let all = async {
        for t in &tasks {
            t.finished().await;
        }
    };
    match timeout {
        None => all.await,
        Some(ms) => {
            let sleep = ctx.run.host.sleep(ms);
            futures::pin_mut!(all);
            let _ = futures::future::select(all, sleep).await;
        }
    }
    for t in tasks.iter().filter(|t| t.is_finished()) {
        chains::join(&ctx.chain.identity, t);
    }
    results(lua, &tasks)
}

/// `tasks.join_any(handles)`: the first task to end (the earliest in the list when several
/// have), joined; its result and its position.
pub async fn join_any(lua: &Lua, ctx: &Rc<EntryCtx>, a: Args) -> Answer {
    let tasks = match tasks_of(ctx, &a.get(0)) {
        Ok(t) if !t.is_empty() => t,
        Ok(_) => return fail(lua, ErrorValueKind::Lua, "tasks.join_any takes a non-empty list of task handles"),
        Err(m) => return fail(lua, ErrorValueKind::Lua, m),
    };
    let i = first_finished(&tasks).await;
    chains::join(&ctx.chain.identity, &tasks[i]);
    let marks = marks_of(lua)?;
    ok(lua, (result_table(lua, &marks, &chains::delivered(&tasks[i]))?, i + 1))
}

/// `handle:status()`.
pub fn status(lua: &Lua, env: &Env, id: &Value) -> Answer {
    match task_by_id(&env.ctx, id) {
        Ok(t) => ok(lua, t.status().as_str()),
        Err(m) => fail(lua, ErrorValueKind::Lua, m),
    }
}

/// `handle:cancel()`: true when the task was still running.
pub fn cancel(lua: &Lua, env: &Env, id: &Value) -> Answer {
    match task_by_id(&env.ctx, id) {
        Ok(t) => ok(lua, chains::cancel(&env.ctx.run, &t)),
        Err(m) => fail(lua, ErrorValueKind::Lua, m),
    }
}

/// The members of a fanout collection, in order: the array part, then the hash part as
/// `{key, value}` pairs (sorted by key, so a run repeats).
fn members(marks: &Marks, collection: &Value) -> Result<Vec<Json>, String> {
    let Value::Table(t) = collection else {
        return Err(format!(
            "tasks.fanout takes a table collection, got {}; to fan out over a list section, pass prompt.list('### List')",
            convert::lua_type(collection)
        ));
    };
    let as_json = |v: &Value, at: &str| {
        convert::to_json(v, marks).map_err(|e| format!("tasks.fanout: member {at} is not JSON data: {}", e.describe()))
    };
    // A var proxy (or any table that converts whole) reads as its JSON value.
    if t.metatable().is_some() {
        return match as_json(collection, "collection")? {
            Json::Array(items) => Ok(items),
            Json::Object(map) => Ok(map.into_iter().map(|(k, v)| crate::obj!({ "key": k, "value": v })).collect()),
            _ => Err("tasks.fanout takes a table collection".into()),
        };
    }
    let len = t.raw_len();
    let mut out = Vec::with_capacity(len);
    for i in 1..=len {
        let v: Value = t.raw_get(i).map_err(|e| e.to_string())?;
        out.push(as_json(&v, &i.to_string())?);
    }
    let mut keyed: Vec<((u8, String), Json, Json)> = Vec::new();
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair.map_err(|e| e.to_string())?;
        if let Value::Integer(i) = k {
            if i >= 1 && i as usize <= len {
                continue;
            }
        }
        let key = match &k {
            Value::String(_) | Value::Integer(_) | Value::Number(_) | Value::Boolean(_) => as_json(&k, "key")?,
            other => {
                return Err(format!(
                    "tasks.fanout: a member's key is a {}; keys must be strings, numbers or booleans",
                    convert::lua_type(other)
                ))
            }
        };
        let at = convert::key_text(&k);
        let value = as_json(&v, &at)?;
        keyed.push(((sort_rank(&key), at), key, value));
    }
    crate::sort::sort_by(&mut keyed, |a, b| a.0.cmp(&b.0));
    out.extend(keyed.into_iter().map(|(_, key, value)| crate::obj!({ "key": key, "value": value })));
    Ok(out)
}

/// Keys sort booleans first, then numbers, then strings (each group by its text).
fn sort_rank(key: &Json) -> u8 {
    match key {
        Json::Bool(_) => 0,
        Json::Number(_) => 1,
        _ => 2,
    }
}

/// `tasks.fanout(worker, collection)`: every arm's result, in collection order.
pub async fn fanout(lua: &Lua, ctx: &Rc<EntryCtx>, a: Args) -> Answer {
    let marks = marks_of(lua)?;
    let worker = match worker(lua, ctx, &a.get(0)) {
        Ok(w) => w,
        Err(m) => return fail(lua, ErrorValueKind::Lua, m),
    };
    let members = match members(&marks, &a.get(1)) {
        Ok(m) if m.is_empty() => return fail(lua, ErrorValueKind::Lua, "tasks.fanout: the collection is empty (no work is likely a bug)"),
        Ok(m) => m,
        Err(m) => return fail(lua, ErrorValueKind::Lua, m),
    };
    match chains::fanout(ctx, worker, members).await {
        Ok(tasks) => results(lua, &tasks),
        Err(e) => chain_failure(lua, ctx, &e),
    }
}

/// A fanout's worker: a section heading, or a Lua function that runs afresh in each arm's own VM
/// (so it may read globals, which are the arm's, but not its caller's locals).
fn worker(lua: &Lua, ctx: &EntryCtx, v: &Value) -> Result<Worker, String> {
    let Value::Function(f) = v else { return target(ctx, "tasks.fanout", v).map(Worker::Section) };
    let Some(section) = ctx.section else {
        return Err("tasks.fanout: a worker function needs a section to run in; call it from a section, not the H1 body".into());
    };
    if let Some(name) = captured_local(lua, f)? {
        return Err(format!(
            "tasks.fanout: a worker function runs in each arm's own VM and cannot use its caller's local `{name}`; pass data in the collection (the arm's item)"
        ));
    }
    Ok(Worker::Function { section, code: f.dump(false).into() })
}

/// The first upvalue of `f` that is not `_ENV` (a captured local), if any.
fn captured_local(lua: &Lua, f: &mlua::Function) -> Result<Option<String>, String> {
    let n = f.info().num_upvalues;
    let mut names: Vec<String> = Vec::new();
    for i in 1..=i32::from(n) {
        // SAFETY: `exec_raw` pushes `f` as stack slot 1; `lua_getupvalue` reads an upvalue of it
        // by index within its count, pushing the value (popped again) and returning its name,
        // which Lua keeps alive while `f` is on the stack; the name is copied before the pop.
        // The closure leaves `f` and the name (or nil) on the stack: both come back.
        let (_, name): (Value, Option<String>) = unsafe {
            lua.exec_raw(f.clone(), |state| {
                let p = mlua::ffi::lua_getupvalue(state, 1, i);
                let name = (!p.is_null()).then(|| std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned());
                if !p.is_null() {
                    mlua::ffi::lua_pop(state, 1);
                }
                if let Some(n) = name {
                    mlua::ffi::lua_pushlstring(state, n.as_ptr().cast(), n.len());
                } else {
                    mlua::ffi::lua_pushnil(state);
                }
            })
            .map_err(|e| e.to_string())?
        };
        if let Some(n) = name {
            names.push(n);
        }
    }
    Ok(names.into_iter().find(|n| n != "_ENV"))
}
