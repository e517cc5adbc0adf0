//! What every Engine function of a VM works with, and how it answers: the VM's [`Env`], a call's
//! [`Args`], and the check convention (`true, ...` or `false, kind, message[, fields]`), whose
//! failures bootstrap.lua raises as error values, so every error value is built in one place.
//! Every binding imports this module; it imports none of them.

use mlua::{Function, IntoLuaMulti, Lua, MultiValue, Table, Value};
use std::cell::OnceCell;
use std::rc::Rc;

use crate::effects::context::EntryCtx;
use crate::effects::Refusal;
use crate::error::ErrorValueKind;

/// What every Engine function of one VM works with.
pub struct Env {
    pub ctx: Rc<EntryCtx>,
    pub marks: Marks,
    /// The `var` proxy metamethods bootstrap.lua defines (set once it has run).
    pub shims: OnceCell<ProxyShims>,
    /// The `coroutine` library, which the sandbox removes from the globals: mlua reads
    /// `coroutine.yield` from the globals when it creates an async function, so binding a
    /// `SuspendOp` lends it back for that moment.
    pub coroutine: Table,
    /// The VM's one async Rust function (see `ops::bind_suspending`), made the first time a
    /// suspending function is bound.
    pub suspending: OnceCell<Function>,
    /// `suspending(f, code)` (lua/parts/suspending.lua): `function(...) return f(code, ...) end`, a
    /// tail call, so the async function yields as if called directly (loaded on first use).
    pub suspend_factory: OnceCell<Function>,
}

impl Env {
    /// The VM's proxy metamethods: the ones kept, or else `shims` (a table of `index`, `newindex`,
    /// `len`, `pairs`), kept from now on.
    pub fn keep_shims(&self, shims: &Value) -> mlua::Result<&ProxyShims> {
        if let Some(kept) = self.shims.get() {
            return Ok(kept);
        }
        let Value::Table(t) = shims else {
            return Err(mlua::Error::runtime("var's first read needs the proxies' metamethods"));
        };
        let made =
            ProxyShims { index: t.raw_get("index")?, newindex: t.raw_get("newindex")?, len: t.raw_get("len")?, pairs: t.raw_get("pairs")? };
        Ok(self.shims.get_or_init(|| made))
    }

    /// The proxy metamethods kept by `var`'s first read.
    pub fn shims(&self) -> mlua::Result<&ProxyShims> {
        self.shims.get().ok_or_else(|| mlua::Error::runtime("var proxies are not ready before var was first read"))
    }
}

/// The per-VM markers conversions need: the `json.array` metatable and `json.null`.
#[derive(Clone)]
pub struct Marks {
    pub array_mt: Table,
}

impl Marks {
    /// Fresh markers for `lua`: the `json.array` metatable as the Engine VM builds it. Enough
    /// to convert values in a bare Lua state (tests, tools) without the Engine globals.
    pub fn new(lua: &Lua) -> mlua::Result<Marks> {
        let array_mt = lua.create_table()?;
        array_mt.raw_set("__name", "json.array")?;
        array_mt.raw_set("__metatable", "json.array")?;
        Ok(Marks { array_mt })
    }
}

/// The metamethod shims bootstrap.lua defines for proxies, kept to build new proxies.
#[derive(Clone)]
pub struct ProxyShims {
    pub index: Function,
    pub newindex: Function,
    pub len: Function,
    pub pairs: Function,
}

/// Makes `env` the VM's app data: handles and proxies find their entry there ([`entry_of`]).
pub fn install(lua: &Lua, env: &Rc<Env>) {
    lua.set_app_data(env.clone());
}

/// The entry a VM serves (its [`Env`] is the VM's app data); `None` for a bare state.
pub(crate) fn entry_of(lua: &Lua) -> Option<Rc<EntryCtx>> {
    lua.app_data_ref::<Rc<Env>>().map(|env| env.ctx.clone())
}

/// A function's Lua arguments, read by position (a missing one is nil).
pub struct Args(pub MultiValue);

impl Args {
    pub fn get(&self, i: usize) -> Value {
        self.0.get(i).cloned().unwrap_or(Value::Nil)
    }
}

/// A table argument, or the error a call with anything else raises.
pub fn table_arg(v: &Value) -> mlua::Result<Table> {
    match v {
        Value::Table(t) => Ok(t.clone()),
        other => Err(mlua::Error::runtime(format!("expected a table, got {}", other.type_name()))),
    }
}

pub type Answer = mlua::Result<MultiValue>;

pub fn ok(lua: &Lua, values: impl mlua::IntoLuaMulti) -> Answer {
    let mut mv = values.into_lua_multi(lua)?;
    internalize(lua, &mut mv)?;
    mv.push_front(Value::Boolean(true));
    Ok(mv)
}

/// The check convention's success with one string, made in Lua's heap straight from `bytes`:
/// `ok` with an owned `String` would first wrap it as an external string, then copy it, and the
/// external string (the Rust copy) would stay alive until a collection. For large texts (tool
/// results, store reads) this is one copy instead of two.
pub fn ok_text(lua: &Lua, bytes: &[u8]) -> Answer {
    Ok(MultiValue::from_iter([Value::Boolean(true), Value::String(lua.create_string(bytes)?)]))
}

/// Not generic, so `ok`'s many instantiations share one copy.
#[inline(never)]
fn internalize(lua: &Lua, mv: &mut MultiValue) -> mlua::Result<()> {
    // mlua makes an owned `String`/`Vec<u8>` a Lua 5.5 *external* string, whose bytes stay on
    // the Rust heap where Lua's memory limit never sees them (model replies and store reads
    // bypassed the ceiling). Copied into Lua's own heap, every string the engine hands a block
    // counts against the memory ceiling.
    for v in mv.iter_mut() {
        if let Value::String(s) = v {
            let copy = lua.create_string(&*s.as_bytes())?;
            *v = Value::String(copy);
        }
    }
    Ok(())
}

/// The check convention's failure: bootstrap.lua raises an error value of this kind.
pub fn fail(lua: &Lua, kind: ErrorValueKind, message: impl AsRef<str>) -> Answer {
    (false, kind.as_str(), message.as_ref()).into_lua_multi(lua)
}

/// A refused step as the check convention's failure, with the `name` field it may carry.
pub fn refuse(lua: &Lua, r: Refusal) -> Answer {
    let mut mv = fail(lua, r.kind, &r.message)?;
    if let Some(name) = r.name {
        let fields = lua.create_table()?;
        fields.raw_set("name", name)?;
        mv.push_back(Value::Table(fields));
    }
    Ok(mv)
}

/// The Engine's global names (the 21 chapter 002 reserves; docs/language.md, "The sandbox and the
/// Engine globals"): the sandbox keeps them, and a Pack prelude may not define them
/// (parts/preludes.lua asks for this list with `E.engine_globals()`).
pub const ENGINE_GLOBALS: &[&str] = &[
    "args",
    "argv",
    "call",
    "compactors",
    "item",
    "json",
    "jump",
    "log",
    "messages",
    "models",
    "packs",
    "prompt",
    "prose",
    "require",
    "store",
    "sys",
    "tasks",
    "tools",
    "ui",
    "untrusted",
    "var",
];
