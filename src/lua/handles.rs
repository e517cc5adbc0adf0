//! What prompt code reads off the Engine's userdata values (`002`), the metamethods of
//! [`Handle`]: the fields of Tool and Pack objects, of model handles and of message records,
//! `messages`' length, records and appenders; every handle is frozen. The appenders are Rust
//! functions of the VM made by `ops::rust_function`, so this module stands above `ops` and
//! nothing imports it: the compiler finds the `UserData` impl through the type.

use mlua::{Lua, MetaMethod, UserData, UserDataMethods, Value};
use serde_json::Value as Json;
use std::rc::Rc;

use super::env::{entry_of, Env, Marks};
use super::models_api::MODEL_INFER;
use super::ops::{self, RustFn};
use super::values::convert;
use super::values::userdata::{pack_object, registry_table, tool_objects, Handle};
use crate::effects::context::EntryCtx;
use crate::effects::models;

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
            Handle::Messages => Ok(entry(lua)?.conversation.messages().len()),
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
            Value::Integer(i) if *i >= 1 && (*i as usize) <= c.conversation.messages().len() => {
                lua.create_userdata(Handle::Record(*i as usize - 1)).map(Value::UserData)
            }
            _ => Ok(Value::Nil),
        },
        (&Handle::Record(i), f) => {
            let msgs = c.conversation.messages();
            let r = &msgs[i];
            match f {
                "role" => text(&r.role),
                "content" => text(&r.content),
                "tool_call_id" => r.tool_call_id.as_deref().map(text).unwrap_or(Ok(Value::Nil)),
                "tool_calls" if !r.tool_calls.is_empty() => {
                    let list: Vec<Json> =
                        r.tool_calls.iter().map(|c| crate::obj!({ "id": c.id, "name": c.name, "arguments": c.arguments })).collect();
                    convert::to_lua(lua, &Json::Array(list), &marks(lua)?)
                }
                _ => Ok(Value::Nil),
            }
        }
        _ => Ok(Value::Nil),
    }
}

const APPENDERS: &str = "runvil.message_appenders";

/// The entry a VM serves (its [`Env`], set as app data when the VM is built).
fn entry(lua: &Lua) -> mlua::Result<Rc<EntryCtx>> {
    entry_of(lua).ok_or_else(|| mlua::Error::runtime("no entry"))
}

/// The VM's JSON markers, so values read off handles convert like every other.
fn marks(lua: &Lua) -> mlua::Result<Marks> {
    lua.app_data_ref::<Rc<Env>>().map(|env| env.marks.clone()).ok_or_else(|| mlua::Error::runtime("no entry"))
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
