//! The Engine's own Lua code, compiled to bytecode by build.rs and loaded into each section VM
//! as *fixed* bytecode. bootstrap.lua runs in every VM; the parts (`lua/parts/*.lua`: the everyday
//! globals, the xpcall/metatable guards, control flow, tasks, tools and packs, models, Pack
//! preludes) load the first time a block reads one of their globals, so an entry pays only for
//! what it uses: every section, call, task and arm makes an entry, which should cost little more
//! than a bare Lua state (docs/performance.md, "One section entry"). Nothing is compiled at run
//! time: that cost every engine's first run several milliseconds in the Lua parser
//! (docs/performance.md, "Start-up").
//!
//! Lua 5.5's `"B"` load mode reads instructions and long strings where they lie instead of
//! copying them, so each buffer must outlive every VM: they are statics. Debug information is
//! stripped: the Engine's errors carry their own messages and levels, and line numbers of Engine
//! code must never show in a prompt's messages anyway.

use mlua::{Function, Lua};
use std::ffi::CStr;

/// Declares the chunks once each: the variant, its name (what bootstrap.lua's `E.load_part`
/// asks for; Lua reports the chunk as `=runvil NAME`) and its bytecode file in build.rs's
/// `OUT_DIR`, so adding a part is one line here.
macro_rules! chunks {
    ($($(#[$doc:meta])* $variant:ident => $name:literal at $file:literal,)*) => {
        /// A piece of the Engine's Lua code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Chunk {
            $($(#[$doc])* $variant,)*
        }

        impl Chunk {
            const ALL: &'static [Chunk] = &[$(Chunk::$variant),*];

            fn name(self) -> &'static str {
                match self {
                    $(Chunk::$variant => $name,)*
                }
            }

            /// The chunk name Lua reports (Engine code never shows line numbers: see the module doc).
            fn chunk_name(self) -> &'static CStr {
                match self {
                    $(Chunk::$variant => const {
                        match CStr::from_bytes_with_nul(concat!("=runvil ", $name, "\0").as_bytes()) {
                            Ok(name) => name,
                            Err(_) => panic!("a chunk name holds no NUL"),
                        }
                    },)*
                }
            }

            /// The chunk's stripped bytecode, compiled by build.rs.
            fn bytecode(self) -> &'static [u8] {
                /// Lua aligns a fixed load's instruction arrays relative to the buffer's start,
                /// so the start must be aligned as an `Instruction` is.
                #[repr(C, align(4))]
                struct Aligned<B: ?Sized>(B);
                match self {
                    $(Chunk::$variant => {
                        static BYTES: &Aligned<[u8]> = &Aligned(*include_bytes!(concat!(env!("OUT_DIR"), $file)));
                        &BYTES.0
                    })*
                }
            }
        }
    };
}

chunks! {
    Bootstrap => "bootstrap" at "/bootstrap.luac",
    /// `json`, `store`, `log`, `untrusted`, `sys`, `prompt`, `ui`, `messages`, `compactors`.
    Basics => "basics" at "/parts/basics.luac",
    /// `jump`, `call`, `require`.
    Control => "control" at "/parts/control.luac",
    Tasks => "tasks" at "/parts/tasks.luac",
    /// `tools` and `packs`.
    Tools => "tools" at "/parts/tools.luac",
    /// `xpcall`, `setmetatable`, `getmetatable`.
    Guards => "guards" at "/parts/guards.luac",
    Models => "models" at "/parts/models.luac",
    Preludes => "preludes" at "/parts/preludes.luac",
    /// var's proxy metamethods.
    Proxies => "proxies" at "/parts/proxies.luac",
    /// Tables of names not built yet (`compactors`, `models`' other fields).
    Unavailable => "unavailable" at "/parts/unavailable.luac",
    /// The wrapper of suspending Engine functions (lua/ops.rs, `bind_suspending`).
    Suspending => "suspending" at "/parts/suspending.luac",
}

impl Chunk {
    /// The part's name as bootstrap.lua asks for it (`E.load_part(name)`); the bootstrap is no part.
    pub fn part(name: &str) -> Option<Chunk> {
        Chunk::ALL.iter().copied().skip(1).find(|c| c.name() == name)
    }

    /// The chunk's main function in `lua`, ready to call.
    pub fn load(self, lua: &Lua) -> mlua::Result<Function> {
        load_fixed(lua, self.bytecode(), self.chunk_name())
    }
}

/// Loads `bytes` (bytecode that lives forever) in fixed mode.
fn load_fixed(lua: &Lua, bytes: &'static [u8], name: &'static CStr) -> mlua::Result<Function> {
    // SAFETY: mode "B" keeps pointers into `bytes`, which are static.
    match unsafe { super::source::load_buffer(lua, bytes, name, c"B", 1) }? {
        (0, mlua::Value::Function(f)) => Ok(f),
        (_, mlua::Value::String(message)) => Err(mlua::Error::runtime(message.to_string_lossy())),
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
        for &chunk in Chunk::ALL {
            chunk.load(&lua).unwrap_or_else(|e| panic!("{chunk:?}: {e}"));
        }
        assert_eq!(Chunk::part("tools"), Some(Chunk::Tools));
        assert_eq!(Chunk::part("bootstrap"), None);
    }
}
