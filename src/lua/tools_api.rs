//! The Rust side of `tools`, `packs`, `messages` and `models.loop` (`002`). Local tool handlers
//! are Lua functions kept by bootstrap.lua and run on the calling coroutine, so a handler can
//! suspend and its raised value reaches the caller unchanged; Rust keeps the scope, the counts,
//! the records and the events.

use futures::future::join_all;
use mlua::{AnyUserData, Lua, MetaMethod, MultiValue, Table, UserData, UserDataMethods, Value};
use serde_json::{json, Value as Json};
use std::rc::Rc;

use super::globals::Env;
use super::values::{self, fail, ok, Answer, Marks};
use crate::engine::context::EntryCtx;
use crate::engine::models;
use crate::tools::catalog::TASK_BUILTINS;
use crate::tools::{self, parse_tool_calls, Advertised, LocalTool, Record, Target, ToolCall, FIXED_LIST};

/// The Engine's userdata values, one Rust type for all of them (each `UserData` impl costs its
/// own copy of mlua's glue): frozen Tool and Pack objects (one per tool or Pack per VM, cached
/// in the registry, so `==` and table keys work), the `messages` list and its records.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Handle {
    Tool(usize),
    Pack(usize),
    Messages,
    Record(usize),
    /// A model handle (`models.get(role)`): the role's index among the declared roles, or
    /// `usize::MAX` for the implicit `default` role.
    Model(usize),
}

impl UserData for Handle {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::Index, |lua, this, key: Value| handle_index(lua, *this, &key));
        m.add_meta_method(MetaMethod::NewIndex, |_, this, (key, _): (Value, Value)| -> mlua::Result<()> {
            Err(mlua::Error::runtime(match this {
                Handle::Tool(_) => frozen_text("Tool", &key),
                Handle::Pack(_) => frozen_text("Pack", &key),
                Handle::Messages => "messages is read-only: add records with messages:user(text)".into(),
                Handle::Record(_) => "message records are read-only".into(),
                Handle::Model(_) => frozen_text("Model handle", &key),
            }))
        });
        m.add_meta_method(MetaMethod::Len, |lua, this, ()| match this {
            Handle::Messages => Ok(entry(lua)?.messages.borrow().len()),
            _ => Err(mlua::Error::runtime("attempt to get length of a userdata value")),
        });
    }
}

fn frozen_text(kind: &str, key: &Value) -> String {
    let k = match key {
        Value::String(s) => s.to_string_lossy(),
        other => other.type_name().to_string(),
    };
    format!("{kind} objects are frozen: cannot assign field \"{k}\"")
}

fn handle_index(lua: &Lua, this: Handle, key: &Value) -> mlua::Result<Value> {
    let c = entry(lua)?;
    let field = match key {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(i) => i.to_string(),
        _ => return Ok(Value::Nil),
    };
    let text = |s: &str| lua.create_string(s).map(Value::String);
    match (this, field.as_str()) {
        (Handle::Tool(i), "id") => text(&c.run.catalog.tools[i].id),
        (Handle::Tool(i), "description") => text(&c.run.catalog.tools[i].spec.description),
        (Handle::Tool(i), "pack") => pack_object(lua, c.run.catalog.tools[i].pack).map(Value::UserData),
        (Handle::Pack(i), "name") => text(&c.run.catalog.packs[i].id),
        (Handle::Pack(i), "tools") => {
            let cat = &c.run.catalog;
            let offered: Vec<usize> = cat.packs[i].tools.iter().copied().filter(|&t| cat.tools[t].wire.is_some()).collect();
            objects(lua, &offered).map(Value::Table)
        }
        (Handle::Model(i), "role" | "id") => {
            let role = c.run.prompt.front.models.keys().nth(i).cloned().unwrap_or_else(|| models::DEFAULT_ROLE.into());
            let spec = models::spec_of(&c, &role);
            match (field.as_str(), spec.get("model").and_then(Json::as_str)) {
                ("id", Some(id)) => text(id),
                _ => text(&role),
            }
        }
        (Handle::Model(_), "infer") => lua.named_registry_value(MODEL_INFER),
        (Handle::Messages, "user" | "system" | "assistant") => {
            let appenders: Table = lua.named_registry_value(APPENDERS)?;
            appenders.raw_get(field.as_str())
        }
        (Handle::Messages, _) => match key {
            Value::Integer(i) if *i >= 1 && (*i as usize) <= c.messages.borrow().len() => {
                lua.create_userdata(Handle::Record(*i as usize - 1)).map(Value::UserData)
            }
            _ => Ok(Value::Nil),
        },
        (Handle::Record(i), f) => {
            let msgs = c.messages.borrow();
            let r = &msgs[i];
            match f {
                "role" => text(&r.role),
                "content" => text(&r.content),
                "tool_call_id" => r.tool_call_id.as_deref().map(text).unwrap_or(Ok(Value::Nil)),
                "tool_calls" if !r.tool_calls.is_empty() => {
                    let list: Vec<Json> =
                        r.tool_calls.iter().map(|c| crate::obj!({ "id": c.id, "name": c.name, "arguments": c.arguments })).collect();
                    let m = Marks { array_mt: lua.create_table()? };
                    values::to_lua(lua, &Json::Array(list), &m)
                }
                _ => Ok(Value::Nil),
            }
        }
        _ => Ok(Value::Nil),
    }
}

const TOOL_OBJECTS: &str = "runvil.tool_objects";
const PACK_OBJECTS: &str = "runvil.pack_objects";
const APPENDERS: &str = "runvil.message_appenders";
const MODEL_INFER: &str = "runvil.model_infer";

/// The entry a VM serves (set as app data when the VM is built).
fn entry(lua: &Lua) -> mlua::Result<Rc<EntryCtx>> {
    lua.app_data_ref::<Rc<EntryCtx>>().map(|c| c.clone()).ok_or_else(|| mlua::Error::runtime("no entry"))
}

/// The VM's one object for a tool or Pack, made on first use and kept in a registry cache, so
/// every read hands out the same value (`==` and table keys work).
fn cached_object(lua: &Lua, cache: &str, idx: usize, handle: Handle) -> mlua::Result<AnyUserData> {
    let cache: Table = lua.named_registry_value(cache)?;
    if let Value::UserData(ud) = cache.raw_get::<Value>(idx + 1)? {
        return Ok(ud);
    }
    let ud = lua.create_userdata(handle)?;
    cache.raw_set(idx + 1, ud.clone())?;
    Ok(ud)
}

fn tool_object(lua: &Lua, idx: usize) -> mlua::Result<AnyUserData> {
    cached_object(lua, TOOL_OBJECTS, idx, Handle::Tool(idx))
}

fn pack_object(lua: &Lua, idx: usize) -> mlua::Result<AnyUserData> {
    cached_object(lua, PACK_OBJECTS, idx, Handle::Pack(idx))
}

fn objects(lua: &Lua, tools: &[usize]) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    for (i, &idx) in tools.iter().enumerate() {
        t.raw_set(i + 1, tool_object(lua, idx)?)?;
    }
    Ok(t)
}

fn lua_type(v: &Value) -> &'static str {
    match v {
        Value::Integer(_) => "integer",
        Value::Number(_) => "number",
        Value::Error(_) => "userdata",
        other => other.type_name(),
    }
}

/// The sequence part of a table: 1.. up to the first nil.
fn sequence(t: &Table) -> Vec<Value> {
    let mut out = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => out.push(v),
        }
    }
    out
}

/// `(kind, message)` of an error value Lua got from a Rust callback (mlua wraps those), so
/// Engine pcall hands prompts an error value with `kind` and `message` like every other.
pub fn error_parts(v: &Value) -> Option<(String, String)> {
    let Value::Error(e) = v else { return None };
    let mut e: &mlua::Error = e;
    loop {
        match e {
            mlua::Error::CallbackError { cause, .. } => e = cause,
            mlua::Error::WithContext { cause, .. } => e = cause,
            mlua::Error::RuntimeError(m) => return Some(("lua".into(), m.clone())),
            mlua::Error::MemoryError(m) => return Some(("lua".into(), m.clone())),
            other => return Some(("lua".into(), other.to_string())),
        }
    }
}

/// Sets up a VM for tools: its entry as app data (Tool and Pack objects and `messages` read
/// it), the object caches, and `E.messages`.
pub fn install(lua: &Lua, e: &Table, ctx: &Rc<EntryCtx>) -> mlua::Result<()> {
    lua.set_app_data(ctx.clone());
    lua.set_named_registry_value(TOOL_OBJECTS, lua.create_table()?)?;
    lua.set_named_registry_value(PACK_OBJECTS, lua.create_table()?)?;
    e.raw_set("messages", lua.create_userdata(Handle::Messages)?)?;
    // messages:user(text) and friends; one closure type, so one copy of mlua's glue.
    let appenders = lua.create_table()?;
    for role in ["user", "system", "assistant"] {
        appenders.raw_set(
            role,
            lua.create_function(move |lua, (_, text): (Value, Value)| {
                let text = match &text {
                    Value::String(s) => s.to_string_lossy(),
                    other => return Err(mlua::Error::runtime(format!("messages:{role} takes a string, got {}", lua_type(other)))),
                };
                entry(lua)?.messages.borrow_mut().push(Record::text(role, text));
                Ok(())
            })?,
        )?;
    }
    lua.set_named_registry_value(APPENDERS, appenders)?;
    Ok(())
}

fn arg(args: &MultiValue, i: usize) -> Value {
    args.get(i).cloned().unwrap_or(Value::Nil)
}

/// The Engine functions of this module by name (see `globals::call`).
pub fn call(lua: &Lua, env: &Env, name: &str, args: &MultiValue) -> Option<Answer> {
    let (c, m) = (&env.ctx, &env.marks);
    Some(match name {
        "error_parts" => match error_parts(&arg(args, 0)) {
            Some((k, msg)) => (k, msg).into_lua_multi(lua),
            None => Ok(MultiValue::new()),
        },
        "tools_get" => match arg(args, 0) {
            Value::String(s) => match c.run.catalog.offered(&s.to_string_lossy()) {
                Some(i) => tool_object(lua, i).and_then(|o| ok(lua, o)),
                None => ok(lua, Value::Nil),
            },
            other => fail(lua, "lua", format!("tools.get takes a tool id, got {}", lua_type(&other))),
        },
        "tools_list" => {
            let required = matches!(arg(args, 0), Value::Boolean(true));
            let cat = &c.run.catalog;
            let list: Vec<usize> = (0..cat.tools.len())
                .filter(|&i| cat.tools[i].wire.is_some() && cat.packs[cat.tools[i].pack].declared == required)
                .collect();
            objects(lua, &list).and_then(|t| ok(lua, t))
        }
        "packs_list" => {
            let required = matches!(arg(args, 0), Value::Boolean(true));
            let list: Vec<usize> = (0..c.run.catalog.packs.len()).filter(|&i| c.run.catalog.packs[i].declared == required).collect();
            (|| {
                let t = lua.create_table()?;
                for (n, i) in list.into_iter().enumerate() {
                    t.raw_set(n + 1, pack_object(lua, i)?)?;
                }
                ok(lua, t)
            })()
        }
        "packs_get" => match arg(args, 0) {
            Value::String(s) => match c.run.catalog.pack(&s.to_string_lossy()) {
                Some(i) => pack_object(lua, i).and_then(|o| ok(lua, o)),
                None => ok(lua, Value::Nil),
            },
            other => fail(lua, "lua", format!("packs.get takes a Pack id, got {}", lua_type(&other))),
        },
        "tools_offer" => tools_offer(lua, c, args.clone()),
        "packs_offer" => packs_offer(lua, c, args.clone()),
        "tools_offer_local" => offer_local(lua, c, args.clone()),
        "tools_resolve" => resolve(lua, c, m, arg(args, 0), arg(args, 1)),
        "local_begin" => {
            let alias = key_text(&arg(args, 0));
            let mut s = c.scope.borrow_mut();
            s.count(&c.run.catalog, &alias);
            s.handler_depth += 1;
            Ok(MultiValue::new())
        }
        "local_end" => local_end(lua, c, args),
        "calls_active" => c.scope.borrow().calls.is_some().into_lua_multi(lua),
        "in_handler" => (c.scope.borrow().handler_depth > 0).into_lua_multi(lua),
        "calls_get" => calls_get(lua, c, &arg(args, 0)),
        "loop_start" => loop_start(lua, c),
        "model_handle" => match arg(args, 0) {
            Value::String(s) if models::declared_role(c, &s.to_string_lossy()) => {
                let role = s.to_string_lossy();
                let i = c.run.prompt.front.models.keys().position(|r| *r == role).unwrap_or(usize::MAX);
                lua.create_userdata(Handle::Model(i)).and_then(|h| ok(lua, h))
            }
            Value::String(s) => fail(lua, "lua", format!("models.get: no model role {} is declared under models:", s.to_string_lossy())),
            other => fail(lua, "lua", format!("models.get takes a role label, got {}", lua_type(&other))),
        },
        "register_model_infer" => lua.set_named_registry_value(MODEL_INFER, arg(args, 0)).map(|()| MultiValue::new()),
        "loop_call" => loop_call(lua, c, m, args),
        "loop_set" => {
            let i = arg(args, 0).as_integer().unwrap_or(0) as usize;
            let text = key_text(&arg(args, 1));
            if let Some(slot) = c.round.borrow_mut().results.get_mut(i.wrapping_sub(1)) {
                *slot = Some(text);
            }
            ok(lua, ())
        }
        "loop_finish" => loop_finish(lua, c),
        "loop_abort" => {
            *c.round.borrow_mut() = Round::default();
            Ok(MultiValue::new())
        }
        _ => return None,
    })
}

fn key_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(i) => i.to_string(),
        other => other.type_name().to_string(),
    }
}

/// A local handler finished: its scalar return becomes the call's text (with the success and
/// result events), or, when it raised, the call is reported as failed.
fn local_end(lua: &Lua, c: &EntryCtx, args: &MultiValue) -> Answer {
    let alias = key_text(&arg(args, 0));
    let call_id = key_text(&arg(args, 1));
    let turn = arg(args, 2).as_integer().map(|t| t as u64).unwrap_or_else(|| c.scope.borrow().turn);
    let raised = matches!(arg(args, 3), Value::Boolean(true));
    c.scope.borrow_mut().handler_depth -= 1;
    let name = c.section_name().to_string();
    let failed = || c.run.emit("tool_call_failed", Some(&name), crate::obj!({ "alias": alias, "tool_call_id": call_id, "turn": turn }));
    if raised {
        if !c.run.stopped() {
            failed();
        }
        return ok(lua, ());
    }
    let text = match crate::engine::block::scalar_text(lua, &arg(args, 4)) {
        Ok(t) => t.unwrap_or_default(),
        Err(e) => {
            failed();
            return fail(lua, "lua", e.message);
        }
    };
    c.run.emit("tool_call_succeeded", Some(&name), crate::obj!({ "alias": alias, "tool_call_id": call_id, "turn": turn }));
    c.run.emit(
        "tool_result",
        Some(&name),
        crate::obj!({ "turn": turn, "tool_call_id": call_id, "alias": alias, "content": text, "trusted": true }),
    );
    ok(lua, text)
}

use mlua::IntoLuaMulti;

/// `tools.call` to a catalog tool (after `tools_resolve`): arguments are the tool's index, its
/// JSON arguments as text, and the name the call used.
pub async fn catalog_call(lua: &Lua, ctx: &EntryCtx, args: MultiValue) -> Answer {
    let (idx, args, name): (usize, String, String) = mlua::FromLuaMulti::from_lua_multi(args, lua)?;
    let args: Json = serde_json::from_str(&args).unwrap_or(crate::obj!({}));
    let turn = ctx.scope.borrow().turn;
    match call_catalog(ctx, idx, &name, args, "", turn, "script").await {
        Ok((text, _trusted)) if ctx.run.catalog.tools[idx].spec.structured => {
            let m = Marks { array_mt: lua.create_table()? };
            match serde_json::from_str::<Json>(&text) {
                Ok(j) => ok(lua, values::to_lua(lua, &j, &m)?),
                Err(e) => fail(lua, "tool", format!("structured tool {name:?} returned invalid JSON: {e}")),
            }
        }
        Ok((text, _)) => ok(lua, text),
        Err(msg) => fail(lua, "tool", format!("tool call failure: {msg}")),
    }
}

/// One tool named in an offer: a tool id string or a Tool object.
fn offer_entry(ctx: &EntryCtx, v: &Value, call: &str) -> Result<usize, String> {
    match v {
        Value::String(s) => {
            let id = s.to_string_lossy();
            ctx.run.catalog.offered(&id).ok_or_else(|| format!("{call}: {id:?} is not a catalog tool in this run"))
        }
        Value::UserData(ud) => match ud.borrow::<Handle>().map(|h| *h) {
            Ok(Handle::Tool(t)) => Ok(t),
            _ => Err(format!("{call} takes tool ids, tool objects, or arrays of them, got userdata")),
        },
        other => Err(format!("{call} takes tool ids, tool objects, or arrays of them, got {}", lua_type(other))),
    }
}

/// What `tools.offer` and `packs.offer` share: the refusal once the list is rendered (checked
/// before the arguments), one argument only, and the entries it names (one, or a list's sequence).
fn offer_entries(ctx: &EntryCtx, call: &str, one: &str, args: &MultiValue) -> Result<Vec<Value>, String> {
    if ctx.scope.borrow().rendered.is_some() {
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

fn tools_offer(lua: &Lua, ctx: &EntryCtx, args: MultiValue) -> Answer {
    let picked: Result<Vec<usize>, String> = offer_entries(ctx, "tools.offer", "tool", &args)
        .and_then(|entries| entries.iter().map(|v| offer_entry(ctx, v, "tools.offer")).collect());
    match picked {
        Ok(picked) => {
            let mut s = ctx.scope.borrow_mut();
            for i in picked {
                s.offer_tool(i);
            }
            ok(lua, ())
        }
        Err(m) => fail(lua, "lua", m),
    }
}

fn packs_offer(lua: &Lua, ctx: &EntryCtx, args: MultiValue) -> Answer {
    let entries = match offer_entries(ctx, "packs.offer", "Pack", &args) {
        Ok(e) => e,
        Err(m) => return fail(lua, "lua", m),
    };
    let mut picked = Vec::new();
    for v in &entries {
        let idx = match v {
            Value::String(s) => {
                let name = s.to_string_lossy();
                if let Some(reason) = crate::tools::catalog::pack_id_error(&name) {
                    return fail(
                        lua,
                        "lua",
                        format!("packs.offer takes a Pack id, a Pack object, or a list of them, got {name:?}: invalid Pack id: {reason}"),
                    );
                }
                match ctx.run.catalog.pack(&name) {
                    Some(i) => i,
                    None => {
                        if let Some(reason) = ctx.run.unavailable_reason(&name) {
                            return fail(lua, "lua", format!("packs.offer: the {name} Pack is unavailable in this run: {reason}"));
                        }
                        return fail(lua, "lua", format!(
                            "packs.offer: no Pack named {name:?} in this run; declare it under uses: to require it, or offer it only when packs.get({name:?}) returns it"
                        ));
                    }
                }
            }
            Value::UserData(ud) => match ud.borrow::<Handle>().map(|h| *h) {
                Ok(Handle::Pack(p)) => p,
                _ => return fail(lua, "lua", "packs.offer takes a Pack id, a Pack object, or a list of them, got userdata"),
            },
            other => {
                return fail(lua, "lua", format!("packs.offer takes a Pack id, a Pack object, or a list of them, got {}", lua_type(other)))
            }
        };
        picked.push(idx);
    }
    let mut s = ctx.scope.borrow_mut();
    for i in picked {
        s.offer_pack(i);
    }
    ok(lua, ())
}

fn offer_local(lua: &Lua, ctx: &EntryCtx, args: MultiValue) -> Answer {
    if ctx.scope.borrow().rendered.is_some() {
        return fail(lua, "lua", format!("tools.offer_local: {FIXED_LIST}"));
    }
    let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::Nil);
    let (alias, description, params, handler) = (arg(0), arg(1), arg(2), arg(3));
    let Value::String(alias) = alias else {
        return fail(lua, "lua", format!("bad argument #1 to 'offer_local' (string expected, got {})", lua_type(&alias)));
    };
    let alias = alias.to_string_lossy();
    let Value::String(description) = description else {
        return fail(lua, "lua", format!("bad argument #2 to 'offer_local' (string expected, got {})", lua_type(&description)));
    };
    let Value::Table(params) = params else {
        return fail(lua, "lua", format!("bad argument #3 to 'offer_local' (table expected, got {})", lua_type(&params)));
    };
    if !matches!(handler, Value::Function(_)) {
        return fail(lua, "lua", format!("bad argument #4 to 'offer_local' (function expected, got {})", lua_type(&handler)));
    }
    if !crate::parse::frontmatter::is_alias(&alias) {
        return fail(lua, "lua", format!("invalid alias {alias:?}: expected [A-Za-z][A-Za-z0-9_-]{{0,63}}"));
    }
    if ctx.scope.borrow().locals.iter().any(|l| l.alias == alias) {
        return fail(lua, "lua", format!("tools.offer_local alias {alias:?} is already registered"));
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
                        return fail(lua, "lua", format!("error converting Lua {} to String (expected string)", other.type_name()));
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
                    "lua",
                    format!("tools.offer_local param {name:?} must be a type string or a {{type, description}} array"),
                );
            }
        };
        if !["string", "integer", "number", "boolean"].contains(&ty.as_str()) {
            return fail(
                lua,
                "lua",
                format!(
                "tools.offer_local param {name:?} has unsupported type {ty:?}: expected \"string\", \"integer\", \"number\", or \"boolean\""
            ),
            );
        }
        list.push((name, ty, description));
    }
    ctx.scope.borrow_mut().locals.push(LocalTool {
        alias,
        description: description.to_string_lossy(),
        parameters: tools::local_schema(&list),
    });
    ok(lua, ())
}

/// `tools.call`'s first steps: check the arguments and say whether the name is a local tool
/// (answered by bootstrap.lua with its handler) or a catalog tool (answered by the host).
fn resolve(lua: &Lua, ctx: &EntryCtx, marks: &Marks, tool: Value, args: Value) -> Answer {
    let name = match &tool {
        Value::String(s) => s.to_string_lossy(),
        Value::UserData(ud) => match ud.borrow::<Handle>().map(|h| *h) {
            Ok(Handle::Tool(t)) => ctx.run.catalog.tools[t].id.clone(),
            _ => return fail(lua, "lua", "tools.call takes a tool id, a local alias, or a tool object, got userdata"),
        },
        other => return fail(lua, "lua", format!("tools.call takes a tool id, a local alias, or a tool object, got {}", lua_type(other))),
    };
    let json_args = match &args {
        Value::Nil => crate::obj!({}),
        Value::Table(_) => match values::to_json(&args, marks) {
            Ok(Json::Array(a)) if a.is_empty() => crate::obj!({}),
            Ok(j @ Json::Object(_)) => j,
            Ok(_) => return fail(lua, "lua", "args must be a JSON-representable table: an array is not an arguments object"),
            Err(e) => return fail(lua, "lua", format!("args must be a JSON-representable table: {}", e.describe())),
        },
        other => return fail(lua, "lua", format!("args must be a table, got {}", lua_type(other))),
    };
    let unbound = |message: String| -> Answer {
        let fields = lua.create_table()?;
        fields.raw_set("name", name.as_str())?;
        let mut mv = fail(lua, "unbound_tool", message)?;
        mv.push_back(Value::Table(fields));
        Ok(mv)
    };
    if TASK_BUILTINS.contains(&name.as_str()) {
        return unbound(format!(
            "tool {name:?} is a task built-in, which only a model can call; Lua starts tasks with the tasks namespace"
        ));
    }
    if ctx.scope.borrow().locals.iter().any(|l| l.alias == name) {
        let m = Marks { array_mt: marks.array_mt.clone() };
        return ok(lua, ("local", name.as_str(), values::to_lua(lua, &json_args, &m)?));
    }
    match ctx.run.catalog.tool(&name) {
        Some(idx) => {
            let used = ctx.run.catalog.tools[idx].wire.clone().unwrap_or_else(|| name.clone());
            ok(lua, ("catalog", idx, json_args.to_string(), used))
        }
        None => {
            let mut ids: Vec<&str> = ctx.run.catalog.tools.iter().filter(|t| t.wire.is_some()).map(|t| t.id.as_str()).collect();
            ids.sort();
            unbound(format!("tool {name:?} is not a tool in this run; catalog tools: {ids:?}"))
        }
    }
}

/// Runs one catalog tool through the host. Returns the text the caller gets (wrapped when
/// untrusted) and its trust, or the tool's model-safe failure message.
async fn call_catalog(
    ctx: &EntryCtx,
    idx: usize,
    used: &str,
    args: Json,
    call_id: &str,
    turn: u64,
    caller: &str,
) -> Result<(String, bool), String> {
    let t = &ctx.run.catalog.tools[idx];
    ctx.scope.borrow_mut().count(&ctx.run.catalog, &t.id);
    let name = ctx.section_name().to_string();
    let host_pack = ctx.run.catalog.packs[t.pack].host.unwrap_or(usize::MAX);
    let request = json!({
        "tool": t.id, "name": used, "arguments": args, "callId": call_id, "caller": caller,
        "section": name, "origin": { "execution": ctx.run.execution, "section": name, "caller": caller },
    });
    let outcome = ctx.run.host.call_tool(host_pack, &t.spec.name, request).await;
    let trusted = t.spec.trusted;
    match outcome {
        Ok(text) => {
            let text = if trusted { text } else { super::untrusted::envelope(&text, &ctx.run.nonce) };
            ctx.run.emit(
                "tool_call_succeeded",
                Some(&name),
                crate::obj!({ "tool": t.id, "alias": used, "tool_call_id": call_id, "turn": turn }),
            );
            ctx.run.emit(
                "tool_result",
                Some(&name),
                crate::obj!({ "turn": turn, "tool_call_id": call_id, "alias": used, "tool": t.id, "content": text, "trusted": trusted }),
            );
            Ok((text, trusted))
        }
        Err(msg) => {
            ctx.run.emit(
                "tool_call_failed",
                Some(&name),
                crate::obj!({ "tool": t.id, "alias": used, "tool_call_id": call_id, "turn": turn, "message": msg }),
            );
            if caller == "model" {
                // The model reads the failure as the call's (untrusted) result.
                let text = super::untrusted::envelope(&msg, &ctx.run.nonce);
                ctx.run.emit(
                    "tool_result",
                    Some(&name),
                    crate::obj!({ "turn": turn, "tool_call_id": call_id, "alias": used, "tool": t.id, "content": text, "trusted": false }),
                );
            }
            Err(msg)
        }
    }
}

fn calls_get(lua: &Lua, ctx: &EntryCtx, key: &Value) -> Answer {
    let k = match key {
        Value::String(s) => s.to_string_lossy(),
        other => lua_type(other).to_string(),
    };
    let s = ctx.scope.borrow();
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
    fail(lua, "lua", format!("tools.calls: {k:?} has no seeded count; seeded names: {seeded:?}{hint}"))
}

/// The round in progress: the calls of the latest reply and their results so far.
#[derive(Default)]
pub struct Round {
    /// The text of the reply that asked for the calls (the assistant record's content).
    pub content: String,
    pub calls: Vec<(ToolCall, Target)>,
    pub results: Vec<Option<String>>,
    /// Whether any round of this loop asked for tools (for the empty-reply rule).
    pub had_calls: bool,
    pub rounds: u64,
}

/// Checks and the render before the first round of a `models.loop` call.
fn loop_start(lua: &Lua, c: &EntryCtx) -> Answer {
    if c.scope.borrow().handler_depth > 0 {
        return fail(lua, "lua", "models.loop cannot run inside a local tool handler; return a value from the handler instead");
    }
    if c.messages.borrow().is_empty() {
        return fail(lua, "lua", "models.loop needs a message to answer: add one with messages:user(text) first");
    }
    let role = match models::resolve_role(c) {
        Ok(r) => r,
        Err(m) => return fail(lua, "model", m),
    };
    if !c.run.host.has_model(&role, &models::spec_of(c, &role)) {
        return fail(lua, "model", format!("no model is bound to the role {role}"));
    }
    if c.scope.borrow().rendered.is_none() {
        let name = c.section_name().to_string();
        c.run.emit("tool_scope_validation_started", Some(&name), crate::obj!({}));
        let count = c.scope.borrow_mut().render(&c.run.catalog).len();
        c.run.emit("tool_scope_validation_succeeded", Some(&name), crate::obj!({ "tools": count }));
    }
    *c.round.borrow_mut() = Round::default();
    ok(lua, ())
}

/// What bootstrap.lua needs to run call i: a local tool's alias and arguments, or "catalog".
fn loop_call(lua: &Lua, c: &EntryCtx, m: &Marks, args: &MultiValue) -> Answer {
    let i = arg(args, 0).as_integer().unwrap_or(0) as usize;
    let r = c.round.borrow();
    let Some((call, target)) = r.calls.get(i.wrapping_sub(1)) else { return ok(lua, Value::Nil) };
    match target {
        Target::Local(alias) => {
            let turn = c.scope.borrow().turn;
            ok(lua, ("local", alias.as_str(), values::to_lua(lua, &call.arguments, m)?, call.id.as_str(), turn))
        }
        Target::Catalog(_) => ok(lua, "catalog"),
    }
}

/// Appends the round's records: one assistant record with every call, one tool record each.
fn loop_finish(lua: &Lua, c: &EntryCtx) -> Answer {
    let r = std::mem::take(&mut *c.round.borrow_mut());
    let content = r.content;
    {
        let mut msgs = c.messages.borrow_mut();
        msgs.push(Record {
            role: "assistant".into(),
            content,
            tool_calls: r.calls.iter().map(|(c, _)| c.clone()).collect(),
            tool_call_id: None,
        });
        for ((call, _), text) in r.calls.iter().zip(r.results) {
            msgs.push(Record {
                role: "tool".into(),
                content: text.unwrap_or_default(),
                tool_calls: Vec::new(),
                tool_call_id: Some(call.id.clone()),
            });
        }
    }
    *c.round.borrow_mut() = Round { had_calls: true, rounds: r.rounds, ..Round::default() };
    ok(lua, ())
}

/// One model round of `models.loop`: `true, text` for a final reply, `false, n` for n tool calls
/// for bootstrap.lua to run.
pub async fn loop_round(lua: &Lua, ctx: &EntryCtx) -> Answer {
    let cap = ctx.run.limits.max_tool_iterations;
    if ctx.round.borrow().rounds >= cap {
        return fail(lua, "round_cap", format!("models.loop reached its round cap of {cap} rounds without a final reply"));
    }
    let role = match models::resolve_role(ctx) {
        Ok(r) => r,
        Err(m) => return fail(lua, "model", m),
    };
    let spec = models::spec_of(ctx, &role);
    let turn = {
        let mut s = ctx.scope.borrow_mut();
        s.turn += 1;
        s.turn
    };
    ctx.round.borrow_mut().rounds += 1;
    let advertised: Vec<Advertised> = ctx.scope.borrow().rendered.clone().unwrap_or_default();
    let mut request = json!({
        "role": role, "spec": spec, "section": ctx.section_name(), "turn": turn,
        "messages": ctx.messages.borrow().iter().map(Record::to_wire).collect::<Vec<_>>(),
    });
    if !advertised.is_empty() {
        request["tools"] = Json::Array(
            advertised.iter().map(|a| crate::obj!({ "name": a.name, "description": a.description, "parameters": a.parameters })).collect(),
        );
    }
    let name = ctx.section_name().to_string();
    ctx.run.emit("model_turn_started", Some(&name), crate::obj!({ "turn": turn, "role": role }));
    let reply = ctx.run.host.call_model(&role, &spec, request).await;
    let reply = match reply {
        Ok(r) => r,
        Err(m) => return fail(lua, "model", m),
    };
    ctx.run.emit("model_turn_completed", Some(&name), crate::obj!({ "turn": turn }));
    let model_id = reply.get("model").and_then(Json::as_str).or_else(|| spec.get("model").and_then(Json::as_str)).unwrap_or(&role);
    let finish = reply.get("finish_reason").and_then(Json::as_str).unwrap_or("stop");
    *ctx.model_facts.borrow_mut() = Some((model_id.to_string(), finish.to_string()));
    let calls = match parse_tool_calls(&reply) {
        Ok(calls) => calls,
        Err(m) => return fail(lua, "model", m),
    };
    let content = match reply.get("content") {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Null) | None => String::new(),
        Some(_) => return fail(lua, "model", "the model's reply is malformed: content must be a string"),
    };
    if calls.is_empty() {
        let stop = reply.get("finish_reason").and_then(Json::as_str) == Some("stop");
        if content.is_empty() && !(stop && ctx.round.borrow().had_calls) {
            return fail(lua, "model", "the model returned an empty reply");
        }
        ctx.messages.borrow_mut().push(Record::text("assistant", content.clone()));
        return ok(lua, (true, content));
    }
    // The scope gate: every name must be one this round advertised.
    let mut resolved = Vec::new();
    for call in &calls {
        match advertised.iter().find(|a| a.name == call.name) {
            Some(a) => resolved.push((call.clone(), a.target.clone())),
            None => {
                emit_batch(ctx, turn, &calls, &advertised);
                ctx.run.emit("tool_call_failed", Some(&name), crate::obj!({ "alias": call.name, "tool_call_id": call.id, "turn": turn }));
                let names: Vec<&str> = advertised.iter().map(|a| a.name.as_str()).collect();
                let hint = if ctx.run.catalog.by_wire(&call.name).is_some() {
                    " (a catalog tool that was not offered in this section)"
                } else {
                    ""
                };
                let fields = lua.create_table()?;
                fields.raw_set("name", call.name.as_str())?;
                let mut mv = fail(
                    lua,
                    "out_of_scope_tool",
                    format!("tool {:?} is not in this section's scope; in-scope aliases: {names:?}{hint}", call.name),
                )?;
                mv.push_back(Value::Table(fields));
                return Ok(mv);
            }
        }
    }
    emit_batch(ctx, turn, &calls, &advertised);
    let n = resolved.len();
    let mut r = ctx.round.borrow_mut();
    r.had_calls = true;
    r.content = content;
    r.results = vec![None; n];
    r.calls = resolved;
    ok(lua, (false, n))
}

/// Runs the catalog calls of the round from call i up to the next local call, concurrently;
/// answers the index of the next call.
pub async fn loop_batch(lua: &Lua, ctx: &EntryCtx, args: MultiValue) -> Answer {
    let i: usize = mlua::FromLuaMulti::from_lua_multi(args, lua)?;
    let turn = ctx.scope.borrow().turn;
    let batch: Vec<(usize, ToolCall, usize)> = {
        let r = ctx.round.borrow();
        r.calls
            .iter()
            .enumerate()
            .skip(i - 1)
            .take_while(|(_, (_, t))| matches!(t, Target::Catalog(_)))
            .filter_map(|(k, (call, t))| match t {
                Target::Catalog(idx) => Some((k, call.clone(), *idx)),
                Target::Local(_) => None,
            })
            .collect()
    };
    let next = i + batch.len();
    let runs = batch.iter().map(|(_, call, idx)| call_catalog(ctx, *idx, &call.name, call.arguments.clone(), &call.id, turn, "model"));
    let outcomes = join_all(runs).await;
    if let Some(stop) = ctx.run.stop.borrow().clone() {
        return fail(lua, "cancelled", stop.message);
    }
    let mut r = ctx.round.borrow_mut();
    for ((k, _, _), outcome) in batch.iter().zip(outcomes) {
        // A bound tool's failure goes back to the model as untrusted text.
        let text = match outcome {
            Ok((text, _)) => text,
            Err(msg) => super::untrusted::envelope(&msg, &ctx.run.nonce),
        };
        r.results[*k] = Some(text);
    }
    ok(lua, next)
}

fn emit_batch(c: &EntryCtx, turn: u64, calls: &[ToolCall], advertised: &[Advertised]) {
    let list: Vec<Json> = calls
        .iter()
        .map(|call| {
            let mut o = crate::obj!({ "id": call.id, "name": call.name, "arguments": call.arguments });
            if let Some(Advertised { target: Target::Catalog(idx), .. }) = advertised.iter().find(|a| a.name == call.name) {
                o["tool"] = Json::from(c.run.catalog.tools[*idx].id.clone());
            }
            o
        })
        .collect();
    c.run.emit("assistant_tool_calls", Some(c.section_name()), crate::obj!({ "turn": turn, "calls": list }));
}
