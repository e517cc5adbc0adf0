//! The Engine's userdata values (`002`): frozen Tool and Pack objects, model handles, the
//! `messages` list and its records. They are one Rust type, [`Handle`], because each `UserData`
//! impl costs its own copy of mlua's glue; a Tool or Pack object is made once per VM and kept in a
//! registry cache, so `==` and table keys work.

use mlua::{AnyUserData, Lua, MetaMethod, Table, UserData, UserDataMethods, Value};
use serde_json::Value as Json;
use std::rc::Rc;

use super::ops::{self, Args, Env, RustFn};
use super::values::{self, fail, ok, Answer, JsonHandle};
use crate::effects::context::EntryCtx;
use crate::effects::models::{self, RoleRef};
use crate::error::ErrorValueKind;
use crate::tools::Record;

#[derive(Debug, Clone)]
pub enum Handle {
    Tool(usize),
    Pack(usize),
    Messages,
    Record(usize),
    /// A model handle (`models.get(role)`).
    Model(RoleRef),
    /// Where a `var` or `argv` proxy points (kept in the proxy's protected metatable, never
    /// handed to prompt code).
    Json(JsonHandle),
}

impl Handle {
    pub fn json(&self) -> Option<&JsonHandle> {
        match self {
            Handle::Json(h) => Some(h),
            _ => None,
        }
    }
}

impl UserData for Handle {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method(MetaMethod::Index, |lua, this, key: Value| handle_index(lua, this, &key));
        m.add_meta_method(MetaMethod::NewIndex, |_, this, (key, _): (Value, Value)| -> mlua::Result<()> {
            Err(mlua::Error::runtime(match this {
                Handle::Tool(_) => frozen_text("Tool", &key),
                Handle::Pack(_) => frozen_text("Pack", &key),
                Handle::Messages => "messages is read-only: add records with messages:user(text)".into(),
                Handle::Record(_) => "message records are read-only".into(),
                Handle::Model(_) => frozen_text("Model handle", &key),
                Handle::Json(_) => "a proxy's handle is read-only".into(),
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

fn handle_index(lua: &Lua, this: &Handle, key: &Value) -> mlua::Result<Value> {
    let c = entry(lua)?;
    let field = match key {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(i) => i.to_string(),
        _ => return Ok(Value::Nil),
    };
    let text = |s: &str| lua.create_string(s).map(Value::String);
    match (this, field.as_str()) {
        (&Handle::Tool(i), "id") => text(&c.run.catalog.tools[i].id),
        (&Handle::Tool(i), "description") => text(&c.run.catalog.tools[i].spec.description),
        (&Handle::Tool(i), "pack") => pack_object(lua, c.run.catalog.tools[i].pack).map(Value::UserData),
        (&Handle::Pack(i), "name") => text(&c.run.catalog.packs[i].id),
        (&Handle::Pack(i), "tools") => {
            let cat = &c.run.catalog;
            let offered: Vec<usize> = cat.packs[i].tools.iter().copied().filter(|&t| cat.tools[t].wire.is_some()).collect();
            tool_objects(lua, &offered).map(Value::Table)
        }
        (&Handle::Model(role), "role" | "id") => {
            let label = models::role_label(&c, role);
            let spec = models::spec_of(&c, &label);
            match (field.as_str(), spec.get("model").and_then(Json::as_str)) {
                ("id", Some(id)) => text(id),
                _ => text(&label),
            }
        }
        (Handle::Model(_), "infer") => lua.named_registry_value(MODEL_INFER),
        (Handle::Messages, "user") => appender(lua, "user"),
        (Handle::Messages, "system") => appender(lua, "system"),
        (Handle::Messages, "assistant") => appender(lua, "assistant"),
        (Handle::Messages, _) => match key {
            Value::Integer(i) if *i >= 1 && (*i as usize) <= c.messages.borrow().len() => {
                lua.create_userdata(Handle::Record(*i as usize - 1)).map(Value::UserData)
            }
            _ => Ok(Value::Nil),
        },
        (&Handle::Record(i), f) => {
            let msgs = c.messages.borrow();
            let r = &msgs[i];
            match f {
                "role" => text(&r.role),
                "content" => text(&r.content),
                "tool_call_id" => r.tool_call_id.as_deref().map(text).unwrap_or(Ok(Value::Nil)),
                "tool_calls" if !r.tool_calls.is_empty() => {
                    let list: Vec<Json> =
                        r.tool_calls.iter().map(|c| crate::obj!({ "id": c.id, "name": c.name, "arguments": c.arguments })).collect();
                    values::to_lua(lua, &Json::Array(list), &marks(lua)?)
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

/// The entry a VM serves (its [`Env`], set as app data when the VM is built).
fn entry(lua: &Lua) -> mlua::Result<Rc<EntryCtx>> {
    super::entry_of(lua).ok_or_else(|| mlua::Error::runtime("no entry"))
}

/// The VM's JSON markers, so values read off handles convert like every other.
fn marks(lua: &Lua) -> mlua::Result<values::Marks> {
    lua.app_data_ref::<Rc<Env>>().map(|env| env.marks.clone()).ok_or_else(|| mlua::Error::runtime("no entry"))
}

/// The VM's one object for a tool or Pack, made on first use and kept in a registry cache, so
/// every read hands out the same value (`==` and table keys work).
fn cached_object(lua: &Lua, cache: &str, idx: usize, handle: Handle) -> mlua::Result<AnyUserData> {
    let cache = registry_table(lua, cache)?;
    if let Value::UserData(ud) = cache.raw_get::<Value>(idx + 1)? {
        return Ok(ud);
    }
    let ud = lua.create_userdata(handle)?;
    cache.raw_set(idx + 1, ud.clone())?;
    Ok(ud)
}

pub fn tool_object(lua: &Lua, idx: usize) -> mlua::Result<AnyUserData> {
    cached_object(lua, TOOL_OBJECTS, idx, Handle::Tool(idx))
}

pub fn pack_object(lua: &Lua, idx: usize) -> mlua::Result<AnyUserData> {
    cached_object(lua, PACK_OBJECTS, idx, Handle::Pack(idx))
}

pub fn tool_objects(lua: &Lua, tools: &[usize]) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    for (i, &idx) in tools.iter().enumerate() {
        t.raw_set(i + 1, tool_object(lua, idx)?)?;
    }
    Ok(t)
}

/// The handle a Lua value holds, if it is one of ours.
pub fn handle_of(v: &Value) -> Option<Handle> {
    match v {
        Value::UserData(ud) => ud.borrow::<Handle>().ok().map(|h| h.clone()),
        _ => None,
    }
}

/// Sets up a VM's handles: the entry's [`Env`] as app data (handles read it). Everything else a
/// handle needs is made on first use.
pub fn install(lua: &Lua, env: &Rc<Env>) -> mlua::Result<()> {
    lua.set_app_data(env.clone());
    Ok(())
}

/// A table the VM keeps in its registry under `key`, made empty on first use: most entries never
/// touch a tool, a Pack or `messages`, and an entry pays only for what it uses.
fn registry_table(lua: &Lua, key: &str) -> mlua::Result<Table> {
    match lua.named_registry_value::<Value>(key)? {
        Value::Table(t) => Ok(t),
        _ => {
            let t = lua.create_table()?;
            lua.set_named_registry_value(key, &t)?;
            Ok(t)
        }
    }
}

/// `E.messages_object()`: the `messages` global's object (the `basics` part asks once per VM).
pub fn messages_object(lua: &Lua) -> Answer {
    values::ok(lua, lua.create_userdata(Handle::Messages)?)
}

/// `messages:user` (and `system`, `assistant`): one Rust function per role and VM, made on first
/// read, so `messages.user == messages.user`.
fn appender(lua: &Lua, role: &'static str) -> mlua::Result<Value> {
    let appenders = registry_table(lua, APPENDERS)?;
    match appenders.raw_get::<Value>(role)? {
        Value::Function(f) => Ok(Value::Function(f)),
        _ => {
            let env = lua.app_data_ref::<Rc<Env>>().map(|env| env.clone()).ok_or_else(|| mlua::Error::runtime("no entry"))?;
            let f = ops::rust_function(lua, &env, RustFn::AppendMessage(role))?;
            appenders.raw_set(role, &f)?;
            Ok(Value::Function(f))
        }
    }
}

/// `messages:user(text)` (and `system`, `assistant`): appends a record to the conversation.
pub fn append_message(env: &Env, role: &'static str, args: &Args) -> Answer {
    let text = match args.get(1) {
        Value::String(s) => s.to_string_lossy(),
        other => return Err(mlua::Error::runtime(format!("messages:{role} takes a string, got {}", values::lua_type(&other)))),
    };
    crate::effects::memory::push_record(&env.ctx, Record::text(role, text)).map_err(mlua::Error::runtime)?;
    Ok(mlua::MultiValue::new())
}

/// `models.get(role)`: a frozen handle on a declared role. `infer` is the Lua function every
/// model handle's `infer` field answers (the `models` part's), kept with the VM's first handle.
pub fn model_handle(lua: &Lua, env: &Env, role: &Value, infer: &Value) -> Answer {
    match role {
        Value::String(s) => {
            let label = s.to_string_lossy();
            match models::role_ref(&env.ctx, &label) {
                Some(r) => {
                    if let (Value::Function(f), Value::Nil) = (infer, lua.named_registry_value::<Value>(MODEL_INFER)?) {
                        lua.set_named_registry_value(MODEL_INFER, f)?;
                    }
                    ok(lua, lua.create_userdata(Handle::Model(r))?)
                }
                None => fail(lua, ErrorValueKind::Lua, format!("models.get: no model role {label} is declared under models:")),
            }
        }
        other => fail(lua, ErrorValueKind::Lua, format!("models.get takes a role label, got {}", values::lua_type(other))),
    }
}
