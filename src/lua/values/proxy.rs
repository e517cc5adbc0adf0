//! The proxies behind `var` and the frozen `argv`: Lua tables that read and write JSON the Engine
//! holds, through their protected metatable ([`JsonHandle`] says where they point). Only a
//! scalar is copied into Lua; a container read becomes a new proxy, and a write is checked to be
//! JSON data and charged against the memory ceiling where it happens.

use mlua::{Lua, Table, UserDataRef, Value};
use serde_json::Value as Json;

use super::convert::{json_null, key_text, number_to_lua, to_json};
use super::json_handle::{apply_write, child, object_border, retype_empty, sequence_to_array, write_delta, Access, JsonHandle, Step};
use super::userdata::Handle;
use crate::effects::memory::Held;
use crate::error::ErrorValueKind;
use crate::lua::env::{entry_of, fail, ok, Answer, Marks, ProxyShims};

pub fn make_proxy(lua: &Lua, shims: &ProxyShims, handle: JsonHandle) -> mlua::Result<Table> {
    let guard = match handle.access {
        Access::Var => "var holds JSON data: its metatable is the Engine's",
        Access::FrozenArgv => "argv is frozen",
        Access::PreludeVar => "var is read-only",
    };
    let mt = lua.create_table_with_capacity(0, 6)?;
    mt.raw_set("__index", shims.index.clone())?;
    mt.raw_set("__newindex", shims.newindex.clone())?;
    mt.raw_set("__len", shims.len.clone())?;
    mt.raw_set("__pairs", shims.pairs.clone())?;
    mt.raw_set("__metatable", guard)?;
    mt.raw_set("__runvil_json", lua.create_userdata(Handle::Json(handle))?)?;
    let t = lua.create_table()?;
    t.set_metatable(Some(mt))?;
    Ok(t)
}

/// The handle behind an Engine proxy (`None` for any other table). Borrowed from the userdata:
/// use it, then let it go.
pub fn proxy_handle(t: &Table) -> Option<UserDataRef<Handle>> {
    match t.metatable()?.raw_get::<Value>("__runvil_json").ok()? {
        Value::UserData(ud) => ud.borrow::<Handle>().ok().filter(|h| h.json().is_some()),
        _ => None,
    }
}

/// A JSON scalar as a Lua value; `None` for an array or object.
fn scalar_to_lua(lua: &Lua, j: &Json) -> mlua::Result<Option<Value>> {
    Ok(Some(match j {
        Json::Array(_) | Json::Object(_) => return Ok(None),
        Json::Null => json_null(),
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => number_to_lua(n),
        Json::String(s) => Value::String(lua.create_string(s)?),
    }))
}

/// A key Lua used on a proxy, as a step into the JSON container it addresses.
fn step_for(container: &Json, key: &Value) -> Result<Option<Step>, String> {
    match (container, key) {
        (Json::Array(_), Value::Integer(i)) if *i >= 1 => Ok(Some(Step::Index(*i as usize))),
        (Json::Array(_), Value::Number(n)) if n.fract() == 0.0 && *n >= 1.0 => Ok(Some(Step::Index(*n as usize))),
        (Json::Array(_), _) => Ok(None),
        (Json::Object(_), Value::String(s)) => Ok(Some(Step::Key(s.to_string_lossy()))),
        (Json::Object(_), Value::Integer(i)) => Ok(Some(Step::Key(i.to_string()))),
        (Json::Object(_), other) => Err(format!("keys must be strings or integers, got {}", other.type_name())),
        _ => Ok(None),
    }
}

/// What a read through a proxy found: a scalar copied into Lua, or a container to proxy.
enum Found {
    Nothing,
    /// A copy of the scalar (a string is copied once, then into Lua).
    Scalar(Json),
    Container(Step),
}

/// `proxy[key]`: walks the JSON by reference; only a scalar is copied (into Lua), a container
/// becomes a new proxy holding its path.
pub fn proxy_index(lua: &Lua, shims: &ProxyShims, t: &Table, key: &Value) -> Answer {
    let Some(handle) = proxy_handle(t) else { return ok(lua, Value::Nil) };
    let Some(h) = handle.json() else { return ok(lua, Value::Nil) };
    // Decided under the borrow, converted after it: creating a Lua string may run a finalizer.
    let found = match h.value() {
        None => Found::Nothing,
        Some(here) => match step_for(&here, key) {
            Ok(Some(step)) => match child(&here, &step) {
                None => Found::Nothing,
                Some(Json::Array(_) | Json::Object(_)) => Found::Container(step),
                Some(scalar) => Found::Scalar(scalar.clone()),
            },
            _ => Found::Nothing,
        },
    };
    match found {
        Found::Nothing => ok(lua, Value::Nil),
        Found::Scalar(j) => ok(lua, scalar_to_lua(lua, &j)?.unwrap_or(Value::Nil)),
        Found::Container(step) => {
            let mut path = Vec::with_capacity(h.path.len() + 1);
            path.extend_from_slice(&h.path);
            path.push(step);
            ok(lua, make_proxy(lua, shims, JsonHandle { root: h.root.clone(), path, access: h.access })?)
        }
    }
}

/// `proxy[key] = value`: converts the value (checking it is JSON data), charges the size change
/// of `var` against the memory ceiling (`effects::memory`), then writes it in place.
pub fn proxy_newindex(lua: &Lua, marks: &Marks, t: &Table, key: &Value, value: &Value) -> Answer {
    let Some(handle) = proxy_handle(t) else { return ok(lua, ()) };
    let Some(h) = handle.json() else { return ok(lua, ()) };
    let k = || match key {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(i) => i.to_string(),
        other => other.type_name().to_string(),
    };
    match h.access {
        Access::FrozenArgv => return fail(lua, ErrorValueKind::Lua, format!("argv is frozen after the H1 pass; cannot set '{}'", k())),
        Access::PreludeVar => {
            let place = if h.path.is_empty() { "var".to_string() } else { h.describe(None) };
            let suffix = if h.path.is_empty() { " inside a Pack prelude" } else { "" };
            return fail(lua, ErrorValueKind::Lua, format!("{place} is read-only{suffix}; cannot set '{}'", k()));
        }
        Access::Var => {}
    }
    // An empty table is an array or an object by its first key, as a Lua table is: `{}` then
    // `[1] = x` is the array `[x]`, `[]` then `.name = x` the object `{"name":x}`. Decided now,
    // applied with the write, so a refused write leaves the container as it was.
    let retyped = if value.is_nil() { None } else { h.value().and_then(|here| retype_empty(&here, key)) };
    let Some(step) = h.value().map(|here| step_for(retyped.as_ref().unwrap_or(&here), key)) else {
        return fail(lua, ErrorValueKind::Lua, format!("{} no longer exists in var", h.describe(None)));
    };
    let step = match step {
        Ok(Some(step)) => step,
        Ok(None) => {
            return fail(lua, ErrorValueKind::Lua, format!("{} is an array: its keys are integers from 1", h.describe(None)));
        }
        Err(e) => return fail(lua, ErrorValueKind::Lua, format!("{}: {e}", h.describe(None))),
    };
    let new = if value.is_nil() {
        None
    } else {
        match to_json(value, marks) {
            Ok(j) => Some(j),
            Err(e) => {
                return fail(
                    lua,
                    ErrorValueKind::Lua,
                    format!("var holds JSON data only: cannot set {}: {}", h.describe(Some(&step)), e.describe()),
                );
            }
        }
    };
    let place = h.describe(Some(&step));
    let delta = match h.value().map(|here| write_delta(retyped.as_ref().unwrap_or(&here), &step, new.as_ref(), &place)) {
        None => return ok(lua, ()),
        Some(Err(e)) => return fail(lua, ErrorValueKind::Lua, e),
        Some(Ok(delta)) => delta,
    };
    if delta != 0 {
        // A bare state (no entry, as in unit tests) charges nothing.
        if let Some(ctx) = entry_of(lua) {
            if let Err(message) = ctx.hold(Held::Var, delta) {
                return fail(lua, ErrorValueKind::Lua, message);
            }
        }
    }
    let removing = new.is_none();
    let shrink = h.with_target(|target| {
        if let Some(empty) = retyped {
            *target = empty;
        }
        apply_write(target, step, new);
        if removing {
            sequence_to_array(target)
        } else {
            0
        }
    });
    // What an object that became an array saves: never refused, it only frees.
    if let (Some(saved @ 1..), Some(ctx)) = (shrink, entry_of(lua)) {
        let _ = ctx.hold(Held::Var, -(saved as i64));
    }
    ok(lua, ())
}

pub fn proxy_len(lua: &Lua, t: &Table) -> Answer {
    let handle = proxy_handle(t);
    let n = handle.as_deref().and_then(Handle::json).and_then(|h| {
        h.value().map(|j| match &*j {
            Json::Array(a) => a.len(),
            Json::Object(m) => object_border(m),
            _ => 0,
        })
    });
    let n = n.unwrap_or(0);
    ok(lua, n)
}

/// `pairs(proxy)`'s snapshot of the keys, taken when `pairs` is called (bootstrap.lua iterates it).
pub fn proxy_pairs(lua: &Lua, t: &Table) -> Answer {
    // The keys are copied out under the borrow and become Lua values after it.
    enum Keys {
        Names(Vec<String>),
        Count(usize),
    }
    let handle = proxy_handle(t);
    let keys = handle.as_deref().and_then(Handle::json).and_then(|h| {
        let here = h.value()?;
        Some(match &*here {
            Json::Object(m) => Keys::Names(m.keys().cloned().collect()),
            Json::Array(a) => Keys::Count(a.len()),
            _ => Keys::Count(0),
        })
    });
    let list = lua.create_table()?;
    match keys {
        Some(Keys::Names(names)) => {
            for (i, k) in names.iter().enumerate() {
                list.raw_set(i + 1, Value::String(lua.create_string(k)?))?;
            }
        }
        Some(Keys::Count(n)) => {
            for i in 1..=n {
                list.raw_set(i, Value::Integer(i as i64))?;
            }
        }
        None => {}
    }
    ok(lua, list)
}

/// `next(proxy, key)` as `next` gives it for the table the proxy shows: `true, key, value`
/// (`true` alone past the end), or `false` when `t` is no proxy (the caller uses Lua's own
/// `next`). Array keys are 1..n, object keys in their sorted order.
pub fn proxy_next(lua: &Lua, shims: &ProxyShims, t: &Table, key: &Value) -> Answer {
    let Some(handle) = proxy_handle(t) else { return ok(lua, false) };
    let Some(h) = handle.json() else { return ok(lua, false) };
    let next_key = match h.value().as_deref() {
        Some(Json::Array(a)) => {
            let after = match key {
                Value::Nil => Some(0),
                Value::Integer(i) if *i >= 1 => Some(*i as usize),
                Value::Number(n) if n.fract() == 0.0 && *n >= 1.0 => Some(*n as usize),
                _ => None,
            };
            match after {
                Some(i) if i < a.len() => Some(Value::Integer(i as i64 + 1)),
                Some(_) => None,
                None => return fail(lua, ErrorValueKind::Lua, format!("invalid key to 'next' for {}", h.describe(None))),
            }
        }
        Some(Json::Object(m)) => {
            // serde_json's map offers no range: the key after `key` is found by a walk from the
            // first (pairs, a snapshot of the keys, is the way over a big object).
            let found = match key {
                Value::Nil => m.keys().next(),
                other => {
                    let after = key_text(other);
                    m.keys().find(|k| k.as_str() > after.as_str())
                }
            };
            match found {
                Some(k) => Some(Value::String(lua.create_string(k)?)),
                None => None,
            }
        }
        _ => None,
    };
    let Some(k) = next_key else { return ok(lua, true) };
    let mut found = proxy_index(lua, shims, t, &k)?;
    // proxy_index answers `true, value`: keep the value after the key.
    let value = found.pop_back().unwrap_or(Value::Nil);
    ok(lua, (true, k, value))
}
