//! The `log` global's Rust side: a checked message becomes a `log` run event.

use mlua::{Lua, Value};

use super::env::{fail, ok, Answer, Env};
use crate::effects::events::Event;
use crate::error::ErrorValueKind;

pub const LOG_MAX_CHARS: usize = 4096;

pub fn log(lua: &Lua, env: &Env, message: &Value) -> Answer {
    let ctx = &env.ctx;
    let Value::String(s) = message else {
        return fail(lua, ErrorValueKind::Lua, format!("log takes a message string, got {}", message.type_name()));
    };
    let Ok(text) = s.to_str() else {
        return fail(lua, ErrorValueKind::Lua, "log message is not valid UTF-8");
    };
    let text = text.to_string();
    if text.chars().count() > LOG_MAX_CHARS {
        return fail(lua, ErrorValueKind::Lua, format!("log message is longer than {LOG_MAX_CHARS} characters"));
    }
    if let Some(c) = text.chars().find(|&c| c.is_control() && c != '\n' && c != '\t') {
        return fail(lua, ErrorValueKind::Lua, format!("log message contains the control character U+{:04X}", c as u32));
    }
    ctx.emit(Event::Log, || crate::obj!({ "id": ctx.id, "message": text }));
    ok(lua, ())
}
