//! The Engine's own Lua code, compiled once per thread and loaded into each section VM as
//! *fixed* bytecode. bootstrap.lua runs in every VM; the parts (`lua/parts/*.lua`: the everyday globals, control flow,
//! tasks, tools and packs, models, Pack preludes) load the first time a block reads one of their
//! globals, so an entry pays only for what it uses (issue 9: a section entry near the cost of a
//! bare Lua state).
//!
//! Lua 5.5's `"B"` load mode reads instructions and long strings where they lie instead of
//! copying them, so each buffer must outlive every VM: it is leaked once per thread (a few tens
//! of KB in all, for the life of the wasm instance). Debug information is stripped: the Engine's
//! errors carry their own messages and levels, and line numbers of Engine code must never show
//! in a prompt's messages anyway.

use mlua::{Function, Lua, LuaOptions, StdLib, Value};
use std::cell::OnceCell;
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
    Models,
    Preludes,
}

impl Chunk {
    const ALL: [Chunk; 7] = [Chunk::Bootstrap, Chunk::Basics, Chunk::Control, Chunk::Tasks, Chunk::Tools, Chunk::Models, Chunk::Preludes];

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
            Chunk::Models => "models",
            Chunk::Preludes => "preludes",
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
            Chunk::Models => c"=runvil models",
            Chunk::Preludes => c"=runvil preludes",
        }
    }

    /// The minified source (build.rs).
    fn source(self) -> &'static str {
        match self {
            Chunk::Bootstrap => include_str!(concat!(env!("OUT_DIR"), "/bootstrap.min.lua")),
            Chunk::Basics => include_str!(concat!(env!("OUT_DIR"), "/parts/basics.min.lua")),
            Chunk::Control => include_str!(concat!(env!("OUT_DIR"), "/parts/control.min.lua")),
            Chunk::Tasks => include_str!(concat!(env!("OUT_DIR"), "/parts/tasks.min.lua")),
            Chunk::Tools => include_str!(concat!(env!("OUT_DIR"), "/parts/tools.min.lua")),
            Chunk::Models => include_str!(concat!(env!("OUT_DIR"), "/parts/models.min.lua")),
            Chunk::Preludes => include_str!(concat!(env!("OUT_DIR"), "/parts/preludes.min.lua")),
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// The chunk's bytecode, compiled on first use in this thread.
    fn bytecode(self) -> mlua::Result<&'static [u8]> {
        BYTECODE.with(|cells| {
            let cell = &cells[self.index()];
            if let Some(bytes) = cell.get() {
                return Ok(*bytes);
            }
            let compiler = Lua::new_with(StdLib::NONE, LuaOptions::new())?;
            let name = self.chunk_name().to_string_lossy();
            let dump = compiler.load(self.source()).set_name(name.as_ref()).into_function()?.dump(true);
            let bytes = leak_aligned(&dump);
            let _ = cell.set(bytes);
            Ok(bytes)
        })
    }

    /// The chunk's main function in `lua`, ready to call.
    pub fn load(self, lua: &Lua) -> mlua::Result<Function> {
        load_fixed(lua, self.bytecode()?, self.chunk_name())
    }
}

thread_local! {
    static BYTECODE: [OnceCell<&'static [u8]>; 7] = const { [const { OnceCell::new() }; 7] };
}

/// A copy of `bytes` that lives as long as the program, 4-byte aligned: a fixed load points
/// Lua's instruction arrays into the buffer, and Lua aligns them relative to its start.
fn leak_aligned(bytes: &[u8]) -> &'static [u8] {
    let words: &'static mut [u32] = Box::leak(vec![0u32; bytes.len().div_ceil(4)].into_boxed_slice());
    // SAFETY: `words` spans at least `bytes.len()` bytes, any byte pattern is a valid u32, and
    // the slice is never freed.
    let view = unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), bytes.len()) };
    view.copy_from_slice(bytes);
    view
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

    /// Every chunk compiles, and the index used for the per-thread cache matches `ALL`.
    #[test]
    fn every_chunk_compiles() {
        for (i, chunk) in Chunk::ALL.into_iter().enumerate() {
            assert_eq!(chunk.index(), i);
            chunk.bytecode().unwrap_or_else(|e| panic!("{chunk:?}: {e}"));
        }
        assert_eq!(Chunk::part("tools"), Some(Chunk::Tools));
        assert_eq!(Chunk::part("bootstrap"), None);
    }
}
