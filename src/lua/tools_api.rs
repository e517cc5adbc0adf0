//! The Rust side of `tools` and `packs` (`002`): lookups, offers, `tools.call` and the counts
//! of `tools.calls`. Only marshalling lives here: the scope and its rules are `tools::Scope`,
//! the calls and their events `effects::tool_calls`. Local tool handlers are Lua functions kept
//! by bootstrap.lua and run on the calling coroutine, so a handler can suspend and whatever it
//! raises reaches the caller unchanged.

use mlua::{IntoLuaMulti, Lua, Value};
use serde_json::Value as Json;

use super::env::{fail, ok, ok_text, refuse, Answer, Args, Env};
use super::values::convert::{self, lua_type, sequence};
use super::values::userdata::{handle_of, pack_object, tool_object, tool_objects, Handle};
use crate::effects::context::EntryCtx;
use crate::effects::tool_calls::{self, LocalEnd, ScriptAnswer};
use crate::effects::Refusal;
use crate::error::ErrorValueKind;
use crate::tools::catalog::TASK_BUILTINS;
use crate::tools::{self, LocalTool, TaskAllow, FIXED_LIST};

/// `tools.get(id)`: the Tool object of an offered catalog tool, or nil.
pub fn tools_get(lua: &Lua, env: &Env, id: &Value) -> Answer {
    match id {
        Value::String(s) => match env.ctx.run.catalog.offered(&s.to_string_lossy()) {
            Some(i) => ok(lua, tool_object(lua, i)?),
            None => ok(lua, Value::Nil),
        },
        other => fail(lua, ErrorValueKind::Lua, format!("tools.get takes a tool id, got {}", lua_type(other))),
    }
}

/// `tools.required()` (`true`) and `tools.extras()`: the Tool objects of the declared Packs or
/// of the others.
pub fn tools_list(lua: &Lua, env: &Env, required: &Value) -> Answer {
    let required = matches!(required, Value::Boolean(true));
    let cat = &env.ctx.run.catalog;
    let list: Vec<usize> =
        (0..cat.tools.len()).filter(|&i| cat.tools[i].wire.is_some() && cat.packs[cat.tools[i].pack].declared == required).collect();
    ok(lua, tool_objects(lua, &list)?)
}

/// `packs.get(id)`: the Pack object, or nil.
pub fn packs_get(lua: &Lua, env: &Env, id: &Value) -> Answer {
    match id {
        Value::String(s) => match env.ctx.run.catalog.pack(&s.to_string_lossy()) {
            Some(i) => ok(lua, pack_object(lua, i)?),
            None => ok(lua, Value::Nil),
        },
        other => fail(lua, ErrorValueKind::Lua, format!("packs.get takes a Pack id, got {}", lua_type(other))),
    }
}

/// `packs.required()` (`true`) and `packs.extras()`.
pub fn packs_list(lua: &Lua, env: &Env, required: &Value) -> Answer {
    let required = matches!(required, Value::Boolean(true));
    let packs = &env.ctx.run.catalog.packs;
    let t = lua.create_table()?;
    for (n, i) in (0..packs.len()).filter(|&i| packs[i].declared == required).enumerate() {
        t.raw_set(n + 1, pack_object(lua, i)?)?;
    }
    ok(lua, t)
}

/// Whether `tools.calls` exists yet (after the entry's first tool call). A plain boolean.
pub fn calls_active(lua: &Lua, env: &Env) -> Answer {
    env.ctx.scope().calls.is_some().into_lua_multi(lua)
}

/// Whether a local tool handler is running. A plain boolean.
/// `tools.allow_tasks(targets?)` once bootstrap.lua checked the arguments: a later call
/// replaces the allowlist.
pub fn allow_tasks(lua: &Lua, env: &Env, targets: &Value) -> Answer {
    let allow = match targets {
        Value::Table(t) => TaskAllow::Only(convert::sequence(t).iter().map(|v| convert::key_text(v).trim().to_string()).collect()),
        _ => TaskAllow::Any,
    };
    env.ctx.scope_mut().task_allow = Some(allow);
    ok(lua, ())
}

/// A local handler starts (bootstrap.lua's `run_local`).
pub fn local_begin(lua: &Lua, env: &Env, alias: &Value) -> Answer {
    tool_calls::local_started(&env.ctx, &convert::key_text(alias));
    ok(lua, ())
}

/// A local handler finished: `(alias, call_id, turn, raised, value)`. Its scalar return becomes
/// the call's text; a return that cannot be text fails the call.
pub fn local_end(lua: &Lua, env: &Env, args: &Args) -> Answer {
    let alias = convert::key_text(&args.get(0));
    let call_id = convert::key_text(&args.get(1));
    let turn = args.get(2).as_integer().map(|t| t as u64);
    let end = if matches!(args.get(3), Value::Boolean(true)) {
        LocalEnd::Raised
    } else {
        match convert::scalar_text(lua, &args.get(4)) {
            Ok(t) => LocalEnd::Answered(t.unwrap_or_default()),
            Err(message) => LocalEnd::BadReturn(message),
        }
    };
    tool_calls::local_finished(&env.ctx, &alias, &call_id, turn, &end);
    match end {
        LocalEnd::Raised => ok(lua, ()),
        LocalEnd::BadReturn(message) => fail(lua, ErrorValueKind::Lua, message),
        LocalEnd::Answered(text) => ok(lua, text),
    }
}

/// `tools.call` to a catalog tool (after `tools_resolve`): arguments are the tool's index, its
/// JSON arguments as text, and the name the call used.
pub async fn catalog_call(lua: &Lua, ctx: &EntryCtx, args: Args) -> Answer {
    let (idx, args, name): (usize, String, String) = mlua::FromLuaMulti::from_lua_multi(args.0, lua)?;
    let args: Json = match crate::json_text::parse_str(&args) {
        Ok(j) => j,
        Err(e) => return fail(lua, ErrorValueKind::Lua, format!("tools.call: the arguments did not survive as JSON: {e}")),
    };
    match tool_calls::script_call(ctx, idx, &name, args).await {
        Ok(ScriptAnswer::Text(text)) => ok_text(lua, text.as_bytes()),
        Ok(ScriptAnswer::Data(j)) => {
            let marks = &lua.app_data_ref::<std::rc::Rc<Env>>().ok_or_else(|| mlua::Error::runtime("no entry"))?.marks.clone();
            ok(lua, convert::to_lua(lua, &j, marks)?)
        }
        Err(r) => refuse(lua, r),
    }
}

/// One tool named in an offer: a tool id string or a Tool object.
fn offer_entry(ctx: &EntryCtx, v: &Value, call: &str) -> Result<usize, String> {
    match v {
        Value::String(s) => {
            let id = s.to_string_lossy();
            ctx.run.catalog.offered(&id).ok_or_else(|| format!("{call}: {id:?} is not a catalog tool in this run"))
        }
        Value::UserData(_) => match handle_of(v) {
            Some(Handle::Tool(t)) => Ok(t),
            _ => Err(format!("{call} takes tool ids, tool objects, or arrays of them, got userdata")),
        },
        other => Err(format!("{call} takes tool ids, tool objects, or arrays of them, got {}", lua_type(other))),
    }
}

/// What `tools.offer` and `packs.offer` share: the refusal once the list is rendered (checked
/// before the arguments), one argument only, and the entries it names (one, or a list's sequence).
fn offer_entries(ctx: &EntryCtx, call: &str, one: &str, args: &mlua::MultiValue) -> Result<Vec<Value>, String> {
    if ctx.scope().rendered.is_some() {
        return Err(format!("{call}: {FIXED_LIST}"));
    }
    if let Some(extra) = args.get(1) {
        return Err(format!("{call} takes one {one} or a list of them, got extra {}", lua_type(extra)));
    }
    Ok(match args.front() {
        // An empty list offers nothing; no argument at all is a mistake for packs.offer.
        None | Some(Value::Nil) if one == "Pack" => {
            return Err("packs.offer takes a Pack id, a Pack object, or a list of them, got nil".into())
        }
        None | Some(Value::Nil) => Vec::new(),
        Some(Value::Table(t)) => sequence(t),
        Some(v) => vec![v.clone()],
    })
}

pub fn tools_offer(lua: &Lua, env: &Env, args: &mlua::MultiValue) -> Answer {
    let ctx = &env.ctx;
    let picked: Result<Vec<usize>, String> = offer_entries(ctx, "tools.offer", "tool", args)
        .and_then(|entries| entries.iter().map(|v| offer_entry(ctx, v, "tools.offer")).collect());
    match picked {
        Ok(picked) => {
            let mut s = ctx.scope_mut();
            for i in picked {
                s.offer_tool(i);
            }
            ok(lua, ())
        }
        Err(m) => fail(lua, ErrorValueKind::Lua, m),
    }
}

pub fn packs_offer(lua: &Lua, env: &Env, args: &mlua::MultiValue) -> Answer {
    let ctx = &env.ctx;
    let entries = match offer_entries(ctx, "packs.offer", "Pack", args) {
        Ok(e) => e,
        Err(m) => return fail(lua, ErrorValueKind::Lua, m),
    };
    let mut picked = Vec::new();
    for v in &entries {
        let idx = match v {
            Value::String(s) => {
                let name = s.to_string_lossy();
                if let Some(reason) = crate::ids::pack_id_error(&name) {
                    return fail(
                        lua,
                        ErrorValueKind::Lua,
                        format!("packs.offer takes a Pack id, a Pack object, or a list of them, got {name:?}: invalid Pack id: {reason}"),
                    );
                }
                match ctx.run.catalog.pack(&name) {
                    Some(i) => i,
                    None => {
                        if let Some(reason) = ctx.run.unavailable_reason(&name) {
                            return fail(
                                lua,
                                ErrorValueKind::Lua,
                                format!("packs.offer: the {name} Pack is unavailable in this run: {reason}"),
                            );
                        }
                        return fail(lua, ErrorValueKind::Lua, format!(
                            "packs.offer: no Pack named {name:?} in this run; declare it under uses: to require it, or offer it only when packs.get({name:?}) returns it"
                        ));
                    }
                }
            }
            Value::UserData(_) => match handle_of(v) {
                Some(Handle::Pack(p)) => p,
                _ => return fail(lua, ErrorValueKind::Lua, "packs.offer takes a Pack id, a Pack object, or a list of them, got userdata"),
            },
            other => {
                return fail(
                    lua,
                    ErrorValueKind::Lua,
                    format!("packs.offer takes a Pack id, a Pack object, or a list of them, got {}", lua_type(other)),
                )
            }
        };
        picked.push(idx);
    }
    let mut s = ctx.scope_mut();
    for i in picked {
        s.offer_pack(i);
    }
    ok(lua, ())
}

/// `tools.offer_local(alias, description, params, handler)`: bootstrap.lua keeps the handler.
pub fn offer_local(lua: &Lua, env: &Env, alias: &Value, description: &Value, params: &Value, handler: &Value) -> Answer {
    let ctx = &env.ctx;
    if ctx.scope().rendered.is_some() {
        return fail(lua, ErrorValueKind::Lua, format!("tools.offer_local: {FIXED_LIST}"));
    }
    let Value::String(alias) = alias else {
        return fail(lua, ErrorValueKind::Lua, format!("bad argument #1 to 'offer_local' (string expected, got {})", lua_type(alias)));
    };
    let alias = alias.to_string_lossy();
    let Value::String(description) = description else {
        return fail(
            lua,
            ErrorValueKind::Lua,
            format!("bad argument #2 to 'offer_local' (string expected, got {})", lua_type(description)),
        );
    };
    let Value::Table(params) = params else {
        return fail(lua, ErrorValueKind::Lua, format!("bad argument #3 to 'offer_local' (table expected, got {})", lua_type(params)));
    };
    if !matches!(handler, Value::Function(_)) {
        return fail(lua, ErrorValueKind::Lua, format!("bad argument #4 to 'offer_local' (function expected, got {})", lua_type(handler)));
    }
    if !crate::ids::is_alias(&alias) {
        return fail(lua, ErrorValueKind::Lua, format!("invalid alias {alias:?}: expected {}", crate::ids::ALIAS_GRAMMAR));
    }
    if ctx.scope().locals.iter().any(|l| l.alias == alias) {
        return fail(lua, ErrorValueKind::Lua, format!("tools.offer_local alias {alias:?} is already registered"));
    }
    let mut list = Vec::new();
    for pair in params.pairs::<Value, Value>() {
        let (k, spec) = pair?;
        let name = match &k {
            Value::String(s) => s.to_string_lossy(),
            other => lua_type(other).to_string(),
        };
        let (ty, description) = match &spec {
            Value::String(s) => (s.to_string_lossy(), None),
            Value::Table(t) => {
                let ty = match t.raw_get::<Value>(1)? {
                    Value::String(s) => s.to_string_lossy(),
                    other => {
                        return fail(
                            lua,
                            ErrorValueKind::Lua,
                            format!("error converting Lua {} to String (expected string)", other.type_name()),
                        );
                    }
                };
                let d = match t.raw_get::<Value>(2)? {
                    Value::String(s) => Some(s.to_string_lossy()),
                    _ => None,
                };
                (ty, d)
            }
            _ => {
                return fail(
                    lua,
                    ErrorValueKind::Lua,
                    format!("tools.offer_local param {name:?} must be a type string or a {{type, description}} array"),
                );
            }
        };
        if !["string", "integer", "number", "boolean"].contains(&ty.as_str()) {
            return fail(
                lua,
                ErrorValueKind::Lua,
                format!(
                "tools.offer_local param {name:?} has unsupported type {ty:?}: expected \"string\", \"integer\", \"number\", or \"boolean\""
            ),
            );
        }
        list.push((name, ty, description));
    }
    ctx.scope_mut().locals.push(LocalTool { alias, description: description.to_string_lossy(), parameters: tools::local_schema(&list) });
    ok(lua, ())
}

/// `tools.call`'s first steps: check the arguments and say whether the name is a local tool
/// (answered by bootstrap.lua with its handler) or a catalog tool (answered by the host).
pub fn resolve(lua: &Lua, env: &Env, tool: &Value, args: &Value) -> Answer {
    let (ctx, marks) = (&env.ctx, &env.marks);
    let name = match tool {
        Value::String(s) => s.to_string_lossy(),
        Value::UserData(_) => match handle_of(tool) {
            Some(Handle::Tool(t)) => ctx.run.catalog.tools[t].id.clone(),
            _ => return fail(lua, ErrorValueKind::Lua, "tools.call takes a tool id, a local alias, or a tool object, got userdata"),
        },
        other => {
            return fail(
                lua,
                ErrorValueKind::Lua,
                format!("tools.call takes a tool id, a local alias, or a tool object, got {}", lua_type(other)),
            )
        }
    };
    let json_args = match args {
        Value::Nil => crate::obj!({}),
        Value::Table(_) => match convert::to_json(args, marks) {
            Ok(Json::Array(a)) if a.is_empty() => crate::obj!({}),
            Ok(j @ Json::Object(_)) => j,
            Ok(_) => return fail(lua, ErrorValueKind::Lua, "args must be a JSON-representable table: an array is not an arguments object"),
            Err(e) => return fail(lua, ErrorValueKind::Lua, format!("args must be a JSON-representable table: {}", e.describe())),
        },
        other => return fail(lua, ErrorValueKind::Lua, format!("args must be a table, got {}", lua_type(other))),
    };
    let unbound = |message: String| refuse(lua, Refusal::new(ErrorValueKind::UnboundTool, message).naming(&name));
    if TASK_BUILTINS.contains(&name.as_str()) {
        return unbound(format!(
            "tool {name:?} is a task built-in, which only a model can call; Lua starts tasks with the tasks namespace"
        ));
    }
    // `true, alias, args` for a local tool (bootstrap.lua runs its handler); `false, index,
    // args as JSON text, the name used` for a catalog tool (the `tool` suspension runs it).
    if ctx.scope().locals.iter().any(|l| l.alias == name) {
        return ok(lua, (true, name.as_str(), convert::to_lua(lua, &json_args, marks)?));
    }
    match ctx.run.catalog.tool(&name) {
        Some(idx) => {
            let used = ctx.run.catalog.tools[idx].wire.clone().unwrap_or_else(|| name.clone());
            ok(lua, (false, idx, json_args.to_string(), used))
        }
        None => {
            let mut ids: Vec<&str> = ctx.run.catalog.tools.iter().filter(|t| t.wire.is_some()).map(|t| t.id.as_str()).collect();
            crate::sort::sort_by(&mut ids, |a, b| a.cmp(b));
            unbound(format!("tool {name:?} is not a tool in this run; catalog tools: {ids:?}"))
        }
    }
}

pub fn calls_get(lua: &Lua, env: &Env, key: &Value) -> Answer {
    let ctx = &env.ctx;
    let k = match key {
        Value::String(s) => s.to_string_lossy(),
        other => lua_type(other).to_string(),
    };
    let s = ctx.scope();
    let Some(calls) = &s.calls else { return ok(lua, Value::Nil) };
    if let Some(n) = calls.get(&k) {
        return ok(lua, *n);
    }
    let seeded: Vec<&String> = calls.keys().collect();
    let hint = if ctx.run.catalog.offered(&k).is_some() {
        " (a catalog tool that was neither offered in this section nor called with tools.call)"
    } else if !seeded.is_empty() {
        " - check for typos or offer it with tools.offer"
    } else {
        ""
    };
    fail(lua, ErrorValueKind::Lua, format!("tools.calls: {k:?} has no seeded count; seeded names: {seeded:?}{hint}"))
}
