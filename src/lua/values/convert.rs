//! Lua values <-> JSON data, the conversions every Engine global shares, and the text and type
//! names messages give Lua values. Engine proxies convert to the JSON they show.

use mlua::{Lua, Table, Value};
use serde_json::{Map, Number, Value as Json};

use super::userdata::Handle;
use crate::lua::env::Marks;

/// Why a Lua value is not JSON data.
#[derive(Debug, Clone, PartialEq)]
pub enum NotJson {
    /// A function, userdata or thread (the Lua type name).
    Type(&'static str),
    /// A table that refers to itself or nests deeper than [`MAX_DEPTH`].
    Cycle,
    /// A key that cannot be a JSON object key.
    Key(&'static str),
    /// NaN or an infinity.
    NotFinite,
}

impl NotJson {
    pub fn describe(&self) -> String {
        match self {
            NotJson::Type(t) => format!("a {t} is not JSON data"),
            NotJson::Cycle => "a table that refers to itself (or nests deeper than 200 levels) is not JSON data".into(),
            NotJson::Key(t) => format!("a table key of type {t} is not JSON data (keys are strings, or integers 1..n for arrays)"),
            NotJson::NotFinite => "NaN and infinities are not JSON data".into(),
        }
    }
}

pub const MAX_DEPTH: usize = 200;

pub fn json_null() -> Value {
    Value::LightUserData(mlua::LightUserData(std::ptr::null_mut()))
}

pub fn is_json_null(v: &Value) -> bool {
    matches!(v, Value::LightUserData(p) if p.0.is_null())
}

/// Converts a Lua value to JSON. Tables marked by `json.array` are arrays; other tables are
/// arrays when their keys are exactly 1..n (n >= 1), objects otherwise (integer keys become
/// decimal strings); an empty unmarked table is `{}`. Engine proxies convert to what they show.
pub fn to_json(v: &Value, marks: &Marks) -> Result<Json, NotJson> {
    to_json_at(v, marks, 0)
}

fn number(n: f64) -> Result<Json, NotJson> {
    Number::from_f64(n).map(Json::Number).ok_or(NotJson::NotFinite)
}

fn to_json_at(v: &Value, marks: &Marks, depth: usize) -> Result<Json, NotJson> {
    if depth > MAX_DEPTH {
        return Err(NotJson::Cycle);
    }
    Ok(match v {
        Value::Nil => Json::Null,
        Value::Boolean(b) => Json::Bool(*b),
        Value::Integer(i) => Json::Number((*i).into()),
        Value::Number(n) => number(*n)?,
        Value::String(s) => Json::String(s.to_string_lossy()),
        Value::LightUserData(p) if p.0.is_null() => Json::Null,
        Value::Table(t) => {
            let mt = t.metatable();
            if let Some(mt) = &mt {
                if let Ok(Value::UserData(ud)) = mt.raw_get::<Value>("__runvil_json") {
                    if let Some(h) = ud.borrow::<Handle>().ok().as_deref().and_then(Handle::json) {
                        return Ok(h.get().unwrap_or(Json::Null));
                    }
                }
            }
            let is_array_marked = mt.as_ref().map(|m| m == &marks.array_mt).unwrap_or(false);
            let len = t.raw_len();
            let mut count = 0usize;
            let mut all_index = true;
            for pair in t.pairs::<Value, Value>() {
                let (k, _) = pair.map_err(|_| NotJson::Cycle)?;
                count += 1;
                match k {
                    Value::Integer(i) if i >= 1 && (i as usize) <= len => {}
                    _ => all_index = false,
                }
            }
            if is_array_marked || (count > 0 && all_index && count == len) {
                let mut items = Vec::with_capacity(len);
                for i in 1..=len {
                    let item: Value = t.raw_get(i).map_err(|_| NotJson::Cycle)?;
                    items.push(to_json_at(&item, marks, depth + 1)?);
                }
                Json::Array(items)
            } else {
                let mut map = Map::new();
                for pair in t.pairs::<Value, Value>() {
                    let (k, item) = pair.map_err(|_| NotJson::Cycle)?;
                    let key = match &k {
                        Value::String(s) => s.to_string_lossy(),
                        Value::Integer(i) => i.to_string(),
                        other => return Err(NotJson::Key(other.type_name())),
                    };
                    map.insert(key, to_json_at(&item, marks, depth + 1)?);
                }
                Json::Object(map)
            }
        }
        other => return Err(NotJson::Type(other.type_name())),
    })
}

/// Plain Lua values for JSON (what `json.decode` returns and the H1 pass's argv starts as):
/// arrays carry the `json.array` marker, null is `json.null`.
pub fn to_lua(lua: &Lua, j: &Json, marks: &Marks) -> mlua::Result<Value> {
    Ok(match j {
        Json::Null => json_null(),
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => number_to_lua(n),
        Json::String(s) => Value::String(lua.create_string(s)?),
        Json::Array(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, to_lua(lua, item, marks)?)?;
            }
            t.set_metatable(Some(marks.array_mt.clone()))?;
            Value::Table(t)
        }
        Json::Object(map) => {
            let t = lua.create_table_with_capacity(0, map.len())?;
            for (k, item) in map {
                t.raw_set(k.as_str(), to_lua(lua, item, marks)?)?;
            }
            Value::Table(t)
        }
    })
}

pub fn number_to_lua(n: &Number) -> Value {
    match n.as_i64() {
        Some(i) => Value::Integer(i),
        None => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
    }
}

/// The scalar return rule (blocks and local tool handlers): the first returned value, if not
/// nil, becomes text.
pub fn scalar_text(lua: &Lua, v: &Value) -> Result<Option<String>, String> {
    let text = match v {
        Value::Nil => return Ok(None),
        Value::Boolean(b) => b.to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Number(_) => lua.coerce_string(v.clone()).ok().flatten().map(|s| s.to_string_lossy()).unwrap_or_default(),
        Value::String(s) => match s.to_str() {
            Ok(t) => t.to_string(),
            Err(_) => return Err("cannot return a string that is not valid UTF-8 as a result".into()),
        },
        other => return Err(format!("cannot return a {} as a result", other.type_name())),
    };
    Ok(Some(text))
}

/// The Lua type as messages name it: integers and floats told apart, mlua's wrapped errors
/// shown as the userdata they are to Lua.
pub fn lua_type(v: &Value) -> &'static str {
    match v {
        Value::Integer(_) => "integer",
        Value::Number(_) => "number",
        Value::Error(_) => "userdata",
        other => other.type_name(),
    }
}

/// The sequence part of a table: 1.. up to the first nil.
pub fn sequence(t: &Table) -> Vec<Value> {
    let mut out = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => out.push(v),
        }
    }
    out
}

/// A key or name argument as text, for messages and lookups: strings as they are, integers in
/// decimal, anything else by its type name.
pub fn key_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(i) => i.to_string(),
        other => other.type_name().to_string(),
    }
}
