//! The Lua environment of one section entry: a fresh, sandboxed Lua 5.5 state with the Engine
//! globals installed (`bootstrap.lua` for the Lua side, `ops` for the typed Rust functions it
//! calls), the work budget (`budget`), and the memory ceiling. This layer marshals between Lua values
//! and `effects`; it holds no protocol of its own.

pub(crate) mod budget;
mod chunks;
mod control_api;
mod env;
mod errors;
mod handles;
mod json;
mod log;
mod loop_api;
mod messages;
mod models_api;
mod ops;
mod preludes;
mod prose;
mod run_values;
mod source;
mod store_api;
mod tools_api;
mod untrusted;
pub mod values;
mod var;

use mlua::{Function, Lua, LuaOptions, StdLib, Table, Value};
use std::cell::OnceCell;
use std::rc::Rc;

use crate::effects::context::EntryCtx;
use crate::effects::memory::Heap;
use env::Marks;
pub use errors::{is_memory_error, memory_limit_error, mlua_error_message, setup_error};
pub use preludes::has_preludes;
pub use source::{load_error, load_text};
use values::convert;
pub use var::var_replaced;

/// The base functions a block may use (docs/language.md, "The sandbox and the Engine globals").
/// Everything else the base library defines is removed after the bootstrap captured what it
/// needs (`rawset` for the `_G` metatable).
/// (Only the test below reads the list: the sandbox removes [`BASE_REMOVED`], and the test checks
/// the two lists cover every global Lua defines.)
#[cfg_attr(not(test), allow(dead_code))]
const BASE_ALLOWED: &[&str] = &[
    "assert",
    "error",
    "getmetatable",
    "ipairs",
    "next",
    "pairs",
    "pcall",
    "select",
    "setmetatable",
    "tonumber",
    "tostring",
    "type",
    "xpcall",
    "_G",
    "_VERSION",
    "string",
    "table",
    "math",
    "utf8",
];

/// What the base library and the opened libraries define beyond [`BASE_ALLOWED`]: removed from
/// every VM once bootstrap.lua has captured what it needs (`coroutine` is opened for mlua's
/// async functions only).
/// (`dofile` and `loadfile` are not registered at all: vendor/lua-src/patches/no-file-loading.patch.)
const BASE_REMOVED: &[&str] = &["collectgarbage", "coroutine", "load", "print", "rawequal", "rawget", "rawlen", "rawset", "warn"];

/// Base functions the official Lua test suite needs and the sandbox removes, kept only in the
/// test-only `lua-testes` build (never the package): tests/lua-testes/PATCHES.md says why.
const TESTES_RESTORED: &[&str] = &["load", "rawget", "rawset", "rawequal", "rawlen", "collectgarbage"];

pub use env::ENGINE_GLOBALS;

/// A section entry's seed: the run seed mixed with the section's heading and the chain (FNV-1a),
/// so every entry has its own `math.random` sequence and the same seed repeats all of them.
fn entry_seed(ctx: &EntryCtx) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in ctx.run.seed.to_le_bytes().iter().chain(ctx.heading().as_bytes()).chain(ctx.chain.id().as_bytes()) {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A section entry's VM and the internals the block runner uses.
pub struct Vm {
    pub lua: Lua,
    pub run_block: Function,
    pub argv_value: Function,
    /// The weak sets of the Engine's error values and of substitution failures (bootstrap.lua).
    pub substitution_errors: Table,
    pub error_values: Table,
    pub install_preludes: Function,
    pub marks: Marks,
    /// The VM's work budget, which the block runner's drive loop reads for the host's turns.
    pub budget: Rc<budget::Budget>,
}

/// A VM's heap as the memory meter sees it. Weak: the meter must not keep a finished entry's
/// VM alive.
struct VmHeap(mlua::WeakLua);

impl Heap for VmHeap {
    fn used(&self) -> Option<usize> {
        self.0.try_upgrade().map(|lua| lua.used_memory())
    }
    fn collect(&self) {
        if let Some(lua) = self.0.try_upgrade() {
            let _ = lua.gc_collect();
        }
    }
    fn set_limit(&self, bytes: usize) {
        if let Some(lua) = self.0.try_upgrade() {
            let _ = lua.set_memory_limit(bytes);
        }
    }
}

/// The libraries a VM opens besides the base library. `coroutine` is loaded for mlua's async
/// functions only (see `env::Env::coroutine`); the sandbox removes it from the globals.
fn libs() -> StdLib {
    StdLib::STRING | StdLib::TABLE | StdLib::MATH | StdLib::UTF8 | StdLib::COROUTINE
}

/// The GC pause (in percent of the live heap) that sets when a fresh VM's first collection
/// cycle starts: see `build_vm`.
const FIRST_GC_PAUSE: i32 = 1000;

/// A fresh VM's first full collection, while the heap holds only the libraries (the patched mlua
/// does no collection work while it builds a state: `vendor/mlua/patches/2-no-gc-while-building.patch`),
/// with a long pause: it sets when the next cycle starts, and at Lua's default pause (1.5 times
/// the libraries' size, which the entry's own setup, mlua's and bootstrap.lua's, passed) every
/// entry began a cycle marking a heap about to be freed whole. Back to the default right after, so
/// the first cycle starts only once a block has allocated that much; the memory ceiling is
/// unchanged (at the limit Lua collects before it fails an allocation). One protected call.
fn first_collection(lua: &Lua) -> mlua::Result<()> {
    use mlua::ffi::{lua_gc, LUA_GCCOLLECT, LUA_GCPARAM, LUA_GCPPAUSE};
    // SAFETY: `lua_gc` with LUA_GCPARAM reads two ints and only sets the parameter; LUA_GCCOLLECT
    // may run finalizers (none exist yet), inside exec_raw's protected call.
    unsafe {
        lua.exec_raw::<()>((), |state| {
            let pause = lua_gc(state, LUA_GCPARAM, LUA_GCPPAUSE, FIRST_GC_PAUSE);
            lua_gc(state, LUA_GCCOLLECT, 0);
            lua_gc(state, LUA_GCPARAM, LUA_GCPPAUSE, pause);
        })
    }
}

/// The sandbox: drops the base globals not on the allowlist. A fixed list, not a walk over `_G`
/// (the walk was a tenth of an entry), and all of them in one protected call (mlua's `raw_set`
/// is one each); `the_sandbox_leaves_only_allowed_globals` checks the list against what Lua
/// defines.
fn drop_removed_globals(lua: &Lua) -> mlua::Result<()> {
    use mlua::ffi::{lua_pop, lua_pushlstring, lua_pushnil, lua_rawgeti, lua_rawset, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS};
    // SAFETY: inside exec_raw's protected call (interning a name may raise a memory error); the
    // globals table is pushed first and each raw set pops the name and nil it pushed.
    unsafe {
        lua.exec_raw::<()>((), |state| {
            lua_rawgeti(state, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
            for name in BASE_REMOVED {
                if !(cfg!(feature = "lua-testes") && TESTES_RESTORED.contains(name)) {
                    lua_pushlstring(state, name.as_ptr().cast(), name.len());
                    lua_pushnil(state);
                    lua_rawset(state, -3);
                }
            }
            lua_pop(state, 1);
        })
    }
}

/// A fresh state with the libraries a VM opens, its one handle running no collection when dropped
/// (mlua's first handle would, on a state about to be freed whole: a tenth of an entry;
/// `vendor/mlua/patches/3-first-handle-gc-option.patch`). `seed` is the state's own: Lua hashes
/// strings with it, and `table.sort`'s randomized pivots and `math.randomseed()` draw from it
/// (`vendor/lua-src/patches/determinism.patch`), so table layouts and sorts repeat with it and
/// depend on no other state (`vendor/mlua/patches/7-state-seed-option.patch`).
fn new_state(seed: u32) -> mlua::Result<Lua> {
    Lua::new_with(libs(), LuaOptions::new().collect_garbage_on_drop(false).seed(seed))
}

pub fn build_vm(ctx: &Rc<EntryCtx>) -> mlua::Result<Vm> {
    let seed = entry_seed(ctx);
    let lua = new_state(seed as u32)?;
    first_collection(&lua)?;
    let g = lua.globals();
    // math.random starts from the run's seed, per section entry (never the clock).
    let math: Table = g.raw_get("math")?;
    math.raw_get::<Function>("randomseed")?.call::<()>((seed as i64, (seed >> 32) as i64))?;
    let coroutine: Table = g.raw_get("coroutine")?;
    if let Value::Table(string) = g.raw_get::<Value>("string")? {
        string.raw_set("dump", Value::Nil)?;
    }
    let array_mt = lua.create_table()?;
    array_mt.raw_set("__name", "json.array")?;
    array_mt.raw_set("__metatable", "json.array")?;
    let marks = Marks { array_mt };

    let e = lua.create_table()?;
    // var's proxy metamethods come with var's first read (the `proxies` part; `var::var_root`).
    e.raw_set("h1", ctx.is_h1())?;
    e.raw_set("json_null", convert::json_null())?;
    let env = Rc::new(env::Env {
        ctx: ctx.clone(),
        marks: marks.clone(),
        shims: OnceCell::new(),
        coroutine,
        suspending: OnceCell::new(),
        suspend_factory: OnceCell::new(),
    });
    env::install(&lua, &env);
    ops::install(&lua, &e, &env)?;

    // bootstrap.lua returns the internals in this order.
    let (run_block, argv_value, install_preludes, error_values, substitution_errors): (Function, Function, Function, Table, Table) =
        chunks::Chunk::Bootstrap.load(&lua)?.call((g.clone(), e))?;

    // Globals that carry run values.
    g.raw_set("args", ctx.chain.args.as_str())?;
    if let Some(item) = &ctx.item {
        g.raw_set("item", convert::to_lua(&lua, item, &marks)?)?;
    }

    drop_removed_globals(&lua)?;

    let budget = budget::install(&lua, ctx)?;
    // The Lua limit is the ceiling less what the engine holds (`effects::memory`).
    ctx.chain.memory.attach(Rc::new(VmHeap(lua.weak())));

    Ok(Vm { run_block, argv_value, substitution_errors, error_values, install_preludes, lua, marks, budget })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sandbox removes globals by a fixed list: every global the opened libraries define must
    /// be on exactly one of the two lists, so a Lua upgrade that adds a base function fails here
    /// instead of leaking it into prompts.
    #[test]
    fn the_sandbox_leaves_only_allowed_globals() {
        let lua = new_state(1).unwrap();
        for pair in lua.globals().pairs::<String, Value>() {
            let (name, _) = pair.unwrap();
            let allowed = BASE_ALLOWED.contains(&name.as_str());
            let removed = BASE_REMOVED.contains(&name.as_str());
            assert!(allowed != removed, "global {name} must be on exactly one of BASE_ALLOWED and BASE_REMOVED");
        }
    }

    /// Reads the collector's state through Lua's C API: (is it running, the pause parameter).
    fn gc_state(lua: &Lua) -> (i64, i64) {
        use mlua::ffi::{lua_gc, lua_pushinteger, LUA_GCISRUNNING, LUA_GCPARAM, LUA_GCPPAUSE};
        // SAFETY: LUA_GCISRUNNING only reads; LUA_GCPARAM with -1 reads the parameter unchanged.
        unsafe {
            lua.exec_raw::<(i64, i64)>((), |state| {
                lua_pushinteger(state, lua_gc(state, LUA_GCISRUNNING).into());
                lua_pushinteger(state, lua_gc(state, LUA_GCPARAM, LUA_GCPPAUSE, -1).into());
            })
        }
        .unwrap()
    }

    /// The patched mlua stops the collector while it builds a state
    /// (`vendor/mlua/patches/2-no-gc-while-building.patch`): it must be running again when the state is
    /// handed over, and the first collection's long pause must not outlive it, or a VM would grow
    /// without collecting until the memory ceiling.
    #[test]
    fn a_fresh_vm_collects_at_lua_default_pause() {
        let lua = new_state(1).unwrap();
        let (running, default_pause) = gc_state(&lua);
        assert_eq!(running, 1, "the collector must run once mlua has built the state");
        first_collection(&lua).unwrap();
        assert_eq!(gc_state(&lua), (1, default_pause));
        assert_ne!(default_pause, i64::from(FIRST_GC_PAUSE));
        // Garbage made after the first collection is collected: the heap stays near its size.
        let before = lua.used_memory();
        lua.load("for i = 1, 20000 do local t = { i, tostring(i) } end").exec().unwrap();
        assert!(lua.used_memory() < before + (1 << 20), "{} bytes after, {before} before", lua.used_memory());
    }
}
