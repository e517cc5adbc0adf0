//! The `messages` global's Rust side (`002`): the entry's conversation as one handle, and its
//! appenders (`messages:user(text)` and its `system` and `assistant` siblings).

use mlua::{Lua, Value};

use super::env::{ok, Answer, Args, Env};
use super::values::convert;
use super::values::userdata::Handle;
use crate::tools::Record;

/// `E.messages_object()`: the `messages` global's object (the `basics` part asks once per VM).
pub fn messages_object(lua: &Lua) -> Answer {
    ok(lua, lua.create_userdata(Handle::Messages)?)
}

/// `messages:user(text)` (and `system`, `assistant`): appends a record to the conversation.
pub fn append_message(env: &Env, role: &'static str, args: &Args) -> Answer {
    let text = match args.get(1) {
        Value::String(s) => s.to_string_lossy(),
        other => return Err(mlua::Error::runtime(format!("messages:{role} takes a string, got {}", convert::lua_type(&other)))),
    };
    env.ctx.push_record(Record::text(role, text)).map_err(mlua::Error::runtime)?;
    Ok(mlua::MultiValue::new())
}
