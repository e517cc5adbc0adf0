//! Failures in the Lua layer as the run sees them: the control signals no `pcall` catches (a
//! stop, a failed allocation, `jump`), the error values mlua wraps around what a Rust function
//! raised, and the run errors a VM's setup and the memory ceiling end the run with.

use mlua::{IntoLuaMulti, Lua, MultiValue, Value};

use super::env::{Answer, Env};
use crate::effects::context::EntryCtx;
use crate::error::{ErrorValueKind, RunError, RunErrorKind};

/// The message Lua raises when an allocation fails (the preallocated LUA_ERRMEM string).
const LUA_MEMORY_ERROR: &str = "not enough memory";

/// Whether the run is being stopped (a control signal no `pcall` catches). A failed allocation
/// is recognised here by Lua's memory-error message and becomes the memory ceiling's stop.
/// Answers a plain boolean.
pub fn is_control(lua: &Lua, env: &Env, err: &Value) -> Answer {
    let c = &env.ctx;
    if is_memory_error(err) {
        c.run.stop_with(memory_limit_error(c).in_section(&c.heading()));
    }
    (c.run.stopped() || c.is_jumping()).into_lua_multi(lua)
}

/// Whether an error is a failed allocation: Lua's own memory error (its preallocated message),
/// or one mlua raised from inside a Rust function and wrapped.
pub fn is_memory_error(err: &Value) -> bool {
    match err {
        Value::String(s) => s.as_bytes().as_ref() == LUA_MEMORY_ERROR.as_bytes(),
        Value::Error(e) => matches!(root_cause(e), mlua::Error::MemoryError(_)),
        _ => false,
    }
}

/// The error under the callback and context layers mlua wraps around what a Rust function raised.
fn root_cause(mut e: &mlua::Error) -> &mlua::Error {
    while let mlua::Error::CallbackError { cause, .. } | mlua::Error::WithContext { cause, .. } = e {
        e = cause;
    }
    e
}

/// `(kind, message)` of an error value Lua got from a Rust callback (mlua wraps those), so
/// Engine pcall hands prompts an error value with `kind` and `message` like every other.
pub fn error_parts(lua: &Lua, err: &Value) -> Answer {
    match mlua_error_message(err) {
        Some(message) => (ErrorValueKind::Lua.as_str(), message).into_lua_multi(lua),
        None => Ok(MultiValue::new()),
    }
}

/// The message of an error mlua wrapped (callback and context layers peeled off).
pub fn mlua_error_message(v: &Value) -> Option<String> {
    let Value::Error(e) = v else { return None };
    Some(match root_cause(e) {
        mlua::Error::RuntimeError(m) | mlua::Error::MemoryError(m) => m.clone(),
        other => other.to_string(),
    })
}

/// Maps a failure to build or drive a VM to a run error: running out of memory is the memory
/// ceiling, anything else is an Engine-level Lua error.
pub fn setup_error(ctx: &EntryCtx, e: mlua::Error) -> RunError {
    match e {
        mlua::Error::MemoryError(_) => memory_limit_error(ctx),
        other => RunError::new(RunErrorKind::Lua, other.to_string()),
    }
    .in_section(&ctx.heading())
}

/// The Lua heap could not grow: the memory ceiling. The message is the one the language reference
/// words; a refused charge of what the engine holds has its own, naming it (`effects::memory`).
pub fn memory_limit_error(ctx: &EntryCtx) -> RunError {
    RunError::new(
        RunErrorKind::Limit,
        format!("memory ceiling of {} bytes exceeded in section {}", ctx.run.limits.memory_bytes, ctx.heading()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlua::{LuaOptions, StdLib};

    /// A float raised from Lua through a Rust callback reads as Lua's own `tostring` writes it (the
    /// patched mlua), not as Rust's float formatting: what `error_parts` hands a prompt.
    #[test]
    fn a_float_error_through_a_rust_callback_reads_as_lua_writes_it() {
        let lua = Lua::new_with(StdLib::NONE, LuaOptions::new()).unwrap();
        let through_rust = lua.create_function(|_, f: mlua::Function| f.call::<()>(())).unwrap();
        lua.globals().set("through_rust", through_rust).unwrap();
        for (raised, lua_text) in
            [("1/3", "0.33333333333333331"), ("1e300", "1e+300"), ("-0.0", "-0.0"), ("2^63", "9.2233720368547758e+18")]
        {
            let (ok, err): (bool, Value) = lua.load(format!("return pcall(through_rust, function() error({raised}) end)")).eval().unwrap();
            assert!(!ok);
            let message = mlua_error_message(&err).unwrap();
            assert_eq!(message.lines().next(), Some(lua_text), "error({raised})");
        }
    }
}
