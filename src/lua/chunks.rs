//! The Engine's own Lua code, compiled to bytecode by build.rs and loaded into each section VM
//! as *fixed* bytecode. bootstrap.lua runs in every VM; the parts (`lua/parts/*.lua`: the everyday
//! globals, the xpcall/metatable guards, control flow, tasks, tools and packs, models, Pack
//! preludes) load the first time a block reads one of their globals, so an entry pays only for
//! what it uses (issue 9: a section entry near the cost of a bare Lua state). Nothing is compiled
//! at run time: that cost every engine's first run several milliseconds in the Lua parser
//! (docs/performance.md, "Start-up").
//!
//! Lua 5.5's `"B"` load mode reads instructions and long strings where they lie instead of
//! copying them, so each buffer must outlive every VM: they are statics. Debug information is
//! stripped: the Engine's errors carry their own messages and levels, and line numbers of Engine
//! code must never show in a prompt's messages anyway.

use mlua::{Function, Lua, Value};
use std::ffi::CStr;

/// A piece of the Engine's Lua code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chunk {
    Bootstrap,
    /// `json`, `store`, `log`, `untrusted`, `sys`, `prompt`, `ui`, `messages`, `compactors`.
    Basics,
    /// `jump`, `call`, `require`.
    Control,
    Tasks,
    /// `tools` and `packs`.
    Tools,
    /// `xpcall`, `setmetatable`, `getmetatable`.
    Guards,
    Models,
    Preludes,
    /// var's proxy metamethods.
    Proxies,
    /// Tables of names not built yet (`compactors`, `models`' other fields).
    Unavailable,
    /// The wrapper of suspending Engine functions (lua/ops.rs, `bind_suspending`).
    Suspending,
}

impl Chunk {
    const ALL: [Chunk; 11] = [
        Chunk::Bootstrap,
        Chunk::Basics,
        Chunk::Control,
        Chunk::Tasks,
        Chunk::Tools,
        Chunk::Guards,
        Chunk::Models,
        Chunk::Preludes,
        Chunk::Proxies,
        Chunk::Unavailable,
        Chunk::Suspending,
    ];

    /// The part's name as bootstrap.lua asks for it (`E.load_part(name)`); the bootstrap is no part.
    pub fn part(name: &str) -> Option<Chunk> {
        Chunk::ALL.into_iter().skip(1).find(|c| c.name() == name)
    }

    fn name(self) -> &'static str {
        match self {
            Chunk::Bootstrap => "bootstrap",
            Chunk::Basics => "basics",
            Chunk::Control => "control",
            Chunk::Tasks => "tasks",
            Chunk::Tools => "tools",
            Chunk::Guards => "guards",
            Chunk::Models => "models",
            Chunk::Preludes => "preludes",
            Chunk::Proxies => "proxies",
            Chunk::Unavailable => "unavailable",
            Chunk::Suspending => "suspending",
        }
    }

    /// The chunk name Lua reports (Engine code never shows line numbers: see the module doc).
    fn chunk_name(self) -> &'static CStr {
        match self {
            Chunk::Bootstrap => c"=runvil bootstrap",
            Chunk::Basics => c"=runvil basics",
            Chunk::Control => c"=runvil control",
            Chunk::Tasks => c"=runvil tasks",
            Chunk::Tools => c"=runvil tools",
            Chunk::Guards => c"=runvil guards",
            Chunk::Models => c"=runvil models",
            Chunk::Preludes => c"=runvil preludes",
            Chunk::Proxies => c"=runvil proxies",
            Chunk::Unavailable => c"=runvil unavailable",
            Chunk::Suspending => c"=runvil suspending",
        }
    }

    /// The chunk's stripped bytecode, compiled by build.rs.
    fn bytecode(self) -> &'static [u8] {
        /// Lua aligns a fixed load's instruction arrays relative to the buffer's start, so the
        /// start must be aligned as an `Instruction` is.
        #[repr(C, align(4))]
        struct Aligned<B: ?Sized>(B);
        macro_rules! luac {
            ($file:literal) => {{
                static BYTES: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), $file)));
                &BYTES.0
            }};
        }
        match self {
            Chunk::Bootstrap => luac!("/bootstrap.luac"),
            Chunk::Basics => luac!("/parts/basics.luac"),
            Chunk::Control => luac!("/parts/control.luac"),
            Chunk::Tasks => luac!("/parts/tasks.luac"),
            Chunk::Tools => luac!("/parts/tools.luac"),
            Chunk::Guards => luac!("/parts/guards.luac"),
            Chunk::Models => luac!("/parts/models.luac"),
            Chunk::Preludes => luac!("/parts/preludes.luac"),
            Chunk::Proxies => luac!("/parts/proxies.luac"),
            Chunk::Unavailable => luac!("/parts/unavailable.luac"),
            Chunk::Suspending => luac!("/parts/suspending.luac"),
        }
    }

    /// The chunk's main function in `lua`, ready to call.
    pub fn load(self, lua: &Lua) -> mlua::Result<Function> {
        load_fixed(lua, self.bytecode(), self.chunk_name())
    }
}

/// Loads `bytes` (bytecode that lives forever) in fixed mode.
fn load_fixed(lua: &Lua, bytes: &'static [u8], name: &'static CStr) -> mlua::Result<Function> {
    // SAFETY: `luaL_loadbufferx` reads `bytes` (static, so valid for every VM that keeps the
    // loaded code) and pushes one value, the function or an error message; the status is pushed
    // under it. Both come back as the closure's results; nothing raises across Rust frames.
    let (status, loaded): (i64, Value) = unsafe {
        lua.exec_raw((), |state| {
            let status = mlua::ffi::luaL_loadbufferx(state, bytes.as_ptr().cast(), bytes.len(), name.as_ptr(), c"B".as_ptr());
            mlua::ffi::lua_pushinteger(state, mlua::ffi::lua_Integer::from(status));
            mlua::ffi::lua_rotate(state, -2, 1);
        })?
    };
    match (status, loaded) {
        (0, Value::Function(f)) => Ok(f),
        (_, Value::String(message)) => Err(mlua::Error::runtime(message.to_string_lossy())),
        (status, _) => Err(mlua::Error::runtime(format!("loading Engine code failed with status {status}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlua::{LuaOptions, StdLib};

    /// Every chunk's bytecode loads, and parts are found by name.
    #[test]
    fn every_chunk_loads() {
        let lua = Lua::new_with(StdLib::NONE, LuaOptions::new()).unwrap();
        for chunk in Chunk::ALL {
            chunk.load(&lua).unwrap_or_else(|e| panic!("{chunk:?}: {e}"));
        }
        assert_eq!(Chunk::part("tools"), Some(Chunk::Tools));
        assert_eq!(Chunk::part("bootstrap"), None);
    }
}
