//! The Engine's userdata values (`002`): frozen Tool and Pack objects, model handles, the
//! `messages` list and its records, and where a `var`/`argv` proxy points. They are one Rust
//! type, [`Handle`], because each `UserData` impl costs its own copy of mlua's glue; what Lua
//! reads off a handle is its metamethods (`handles`). A Tool or Pack object is made once per VM
//! and kept in a registry cache, so `==` and table keys work.

use mlua::{AnyUserData, Lua, Table, Value};

use super::json_handle::JsonHandle;
use crate::effects::models::RoleRef;

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

const TOOL_OBJECTS: &str = "runvil.tool_objects";
const PACK_OBJECTS: &str = "runvil.pack_objects";

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

/// A table the VM keeps in its registry under `key`, made empty on first use: most entries never
/// touch a tool, a Pack or `messages`, and an entry pays only for what it uses.
pub(crate) fn registry_table(lua: &Lua, key: &str) -> mlua::Result<Table> {
    match lua.named_registry_value::<Value>(key)? {
        Value::Table(t) => Ok(t),
        _ => {
            let t = lua.create_table()?;
            lua.set_named_registry_value(key, &t)?;
            Ok(t)
        }
    }
}
