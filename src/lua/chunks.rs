//! The Engine's own Lua code (bootstrap.lua), compiled once per thread and loaded into each
//! section VM as *fixed* bytecode: Lua 5.5's `"B"` load mode reads the instructions and long
//! strings where they lie instead of copying them, so the buffer must outlive every VM. It is
//! leaked once per thread (a few tens of KB, for the life of the wasm instance) and never
//! copied again. Debug information is stripped: the Engine's errors carry their own messages
//! and levels, and line numbers of Engine code must never show in a prompt's messages anyway.

use mlua::{Function, Lua, LuaOptions, StdLib, Value};
use std::cell::OnceCell;

// bootstrap.lua as build.rs minified it (comments and indentation dropped).
const BOOTSTRAP: &str = include_str!(concat!(env!("OUT_DIR"), "/bootstrap.min.lua"));
const BOOTSTRAP_NAME: &std::ffi::CStr = c"=runvil bootstrap";

thread_local! {
    static BOOTSTRAP_BYTECODE: OnceCell<&'static [u8]> = const { OnceCell::new() };
}

/// bootstrap.lua's bytecode, compiled on first use.
fn bootstrap_bytecode() -> mlua::Result<&'static [u8]> {
    BOOTSTRAP_BYTECODE.with(|cell| {
        if let Some(bytes) = cell.get() {
            return Ok(*bytes);
        }
        let compiler = Lua::new_with(StdLib::NONE, LuaOptions::new())?;
        let dump = compiler.load(BOOTSTRAP).set_name("=runvil bootstrap").into_function()?.dump(true);
        let bytes = leak_aligned(&dump);
        let _ = cell.set(bytes);
        Ok(bytes)
    })
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

/// bootstrap.lua's main function in `lua`, ready to call.
pub fn bootstrap(lua: &Lua) -> mlua::Result<Function> {
    load_fixed(lua, bootstrap_bytecode()?, BOOTSTRAP_NAME)
}

/// Loads `bytes` (bytecode that lives forever) in fixed mode.
fn load_fixed(lua: &Lua, bytes: &'static [u8], name: &'static std::ffi::CStr) -> mlua::Result<Function> {
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
