//! Loading a prompt's Lua text (a block, the shared library, a `require`d section's blocks) as a
//! function, at the line where it stands in the prompt file, so Lua's positions ("## Main:12:")
//! are file lines.
//!
//! The line is handed to Lua's lexer (`lua_setloadline`, vendor/lua-src/patches/loadline.patch)
//! instead of prepending that many newlines: the lexer read those one by one, some 20,000
//! instructions for a block at line 600, and the padded copy of the text was an allocation of
//! its own (docs/performance.md, "Decision records").

use mlua::{Function, Lua, Value};
use std::ffi::{c_int, CStr, CString};

use crate::error::{RunError, RunErrorKind};

extern "C-unwind" {
    // Added by loadline.patch (lstate.c): the first line of the next text chunk `lua_load` reads.
    fn lua_setloadline(l: *mut mlua::ffi::lua_State, line: c_int);
}

/// Compiles `code` (text only: a prompt must never get Lua to load bytecode, which can corrupt
/// the VM) as chunk `=name`, its first line numbered `line`. Errors are the ones mlua's own
/// loader gives: `SyntaxError`, `MemoryError`, or `RuntimeError` (the parser nested deeper than
/// the C stack allows).
pub fn load_text(lua: &Lua, code: &str, line: usize, name: &str) -> mlua::Result<Function> {
    let name = CString::new(format!("={name}")).map_err(|err| mlua::Error::runtime(format!("invalid name: {err}")))?;
    let line = c_int::try_from(line.max(1)).unwrap_or(c_int::MAX);
    // SAFETY: text mode ("t") copies what it keeps out of `code`.
    let (status, loaded) = unsafe { load_buffer(lua, code.as_bytes(), &name, c"t", line) }?;
    let message = |v: &Value| match v {
        Value::String(s) => s.to_string_lossy(),
        _ => String::from("<unknown error>"),
    };
    match (status, loaded) {
        (mlua::ffi::LUA_OK, Value::Function(f)) => Ok(f),
        (mlua::ffi::LUA_ERRSYNTAX, v) => {
            let message = message(&v);
            Err(mlua::Error::SyntaxError { incomplete_input: message.ends_with("<eof>") || message.ends_with("'<eof>'"), message })
        }
        (mlua::ffi::LUA_ERRMEM, v) => Err(mlua::Error::MemoryError(message(&v))),
        (_, v) => Err(mlua::Error::RuntimeError(message(&v))),
    }
}

/// The run error a failed [`load_text`] of chunk `chunk_name` is, as a prompt's author sees it;
/// `Err` gives back an error of the VM itself (no memory), which is not the text's fault.
pub fn load_error(e: mlua::Error, chunk_name: &str) -> Result<RunError, mlua::Error> {
    match e {
        mlua::Error::SyntaxError { message, .. } => Ok(RunError::new(RunErrorKind::Lua, message)),
        // Lua's parser raises a runtime error, not a syntax error, when the text nests deeper
        // than the C stack allows; mlua adds its traceback of C frames. The first line, at the
        // text, is the message.
        mlua::Error::RuntimeError(message) => {
            let first = message.lines().next().unwrap_or_default();
            Ok(RunError::new(RunErrorKind::Lua, format!("{chunk_name}: {first}")))
        }
        other => Err(other),
    }
}

/// `luaL_loadbufferx` over `bytes` as chunk `name` in `mode`, its first line numbered `line` (text
/// only): the status and what the load pushed, the function or an error message. Shared by
/// prompt text and the Engine's own bytecode (`chunks.rs`).
///
/// # Safety
/// With mode `"B"`, Lua 5.5 keeps pointers into `bytes` in what it loads, so they must outlive
/// the state.
pub(super) unsafe fn load_buffer(lua: &Lua, bytes: &[u8], name: &CStr, mode: &CStr, line: c_int) -> mlua::Result<(c_int, Value)> {
    // SAFETY: `lua_setloadline` only stores the line in the global state; `luaL_loadbufferx`
    // reads `bytes` during the call (the caller answers for what mode "B" keeps) and pushes one
    // value, the function or an error message; the status goes under it. Both come back as the
    // closure's results; nothing raises across Rust frames (a load reports its errors by status).
    let (status, loaded): (i64, Value) = lua.exec_raw((), |state| {
        lua_setloadline(state, line);
        let status = mlua::ffi::luaL_loadbufferx(state, bytes.as_ptr().cast(), bytes.len(), name.as_ptr(), mode.as_ptr());
        mlua::ffi::lua_pushinteger(state, mlua::ffi::lua_Integer::from(status));
        mlua::ffi::lua_rotate(state, -2, 1);
    })?;
    Ok((status as c_int, loaded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlua::{LuaOptions, StdLib};

    /// Positions are the given line's, a syntax error is mlua's `SyntaxError`, and the line
    /// applies to one load only.
    #[test]
    fn a_chunk_reports_the_lines_it_was_given() {
        let lua = Lua::new_with(StdLib::NONE, LuaOptions::new()).unwrap();
        let f = load_text(&lua, "local x = 1\nerror('boom')", 41, "## S").unwrap();
        assert_eq!(f.call::<()>(()).unwrap_err().to_string().lines().next().unwrap(), "runtime error: ## S:42: boom");
        match load_text(&lua, "\nlocal = 1", 10, "## S") {
            Err(mlua::Error::SyntaxError { message, .. }) => assert_eq!(message, "## S:11: <name> expected near '='"),
            other => panic!("expected a syntax error, got {other:?}"),
        }
        let g = lua.load("error('plain')").set_name("=p").into_function().unwrap();
        assert_eq!(g.call::<()>(()).unwrap_err().to_string().lines().next().unwrap(), "runtime error: p:1: plain");
        assert!(matches!(load_text(&lua, "x = 1", 1, "bad\0name"), Err(mlua::Error::RuntimeError(_))));
    }
}
