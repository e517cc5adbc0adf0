//! The `json` global's Rust side: `json.array`, `json.encode` and `json.decode`, over
//! `values::convert`.

use mlua::{Lua, MultiValue, Value};

use super::env::{fail, ok, Answer, Env};
use super::values::convert;
use crate::error::ErrorValueKind;

/// `json.array(...)`: a table marked as a JSON array. A nil argument is refused: a Lua sequence
/// ends at its first nil, so the items after it would be lost without a word.
pub fn json_array(lua: &Lua, env: &Env, items: MultiValue) -> Answer {
    if let Some(at) = items.iter().position(Value::is_nil) {
        let message = format!("json.array: argument {} is nil (an array cannot hold nil; json.null is JSON's null)", at + 1);
        return fail(lua, ErrorValueKind::Lua, message);
    }
    let t = lua.create_sequence_from(items)?;
    t.set_metatable(Some(env.marks.array_mt.clone()))?;
    ok(lua, t)
}

pub fn json_encode(lua: &Lua, env: &Env, v: &Value) -> Answer {
    match convert::to_json(v, &env.marks) {
        Ok(j) => ok(lua, j.to_string()),
        Err(e) => fail(lua, ErrorValueKind::Lua, format!("json.encode: {}", e.describe())),
    }
}

pub fn json_decode(lua: &Lua, env: &Env, v: &Value) -> Answer {
    let m = &env.marks;
    let Value::String(s) = v else {
        return fail(lua, ErrorValueKind::Lua, format!("json.decode takes a string, got {}", v.type_name()));
    };
    match crate::json_text::parse(&s.as_bytes()) {
        Ok(j) => ok(lua, convert::to_lua(lua, &j, m)?),
        Err(e) => fail(lua, ErrorValueKind::Lua, format!("json.decode: invalid JSON: {e}")),
    }
}
