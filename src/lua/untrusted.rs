//! The `untrusted` global's Rust side: text wrapped in the run's untrusted envelope.

use mlua::{Lua, Value};

use super::env::{fail, ok, Answer, Env};
use crate::error::ErrorValueKind;

pub fn untrusted(lua: &Lua, env: &Env, v: &Value) -> Answer {
    let c = &env.ctx;
    let text = match v {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(_) | Value::Number(_) => match lua.coerce_string(v.clone())? {
            Some(s) => s.to_string_lossy(),
            None => String::new(),
        },
        other => return fail(lua, ErrorValueKind::Lua, format!("untrusted takes a string, got {}", other.type_name())),
    };
    ok(lua, crate::untrusted::envelope(&text, &c.run.nonce))
}
