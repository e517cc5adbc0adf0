//! The `json` global's Rust side: `json.array`, `json.encode` and `json.decode`, over
//! `values::convert`.

use mlua::{IntoLuaMulti, Lua, MultiValue, Value};

use super::env::{fail, ok, Answer, Env};
use super::values::convert;
use crate::error::ErrorValueKind;

/// `json.array(...)`: a table marked as a JSON array.
pub fn json_array(lua: &Lua, env: &Env, items: MultiValue) -> Answer {
    let t = lua.create_sequence_from(items)?;
    t.set_metatable(Some(env.marks.array_mt.clone()))?;
    t.into_lua_multi(lua)
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
