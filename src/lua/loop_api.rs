//! The Rust side of `models.loop` (`002`, "The tool loop"): bootstrap.lua's loop calls these
//! between the model rounds and the local handlers it runs; each marshals Lua values into
//! `effects::round` and its typed outcome back. Positions are 1-based here, as Lua counts.

use mlua::{Lua, Value};

use super::env::{ok, refuse, Answer, Args, Env};
use super::values::convert;
use crate::effects::context::EntryCtx;
use crate::effects::round::{self, PendingCall, RoundEnd};

/// Checks and the render before the first round.
pub fn start(lua: &Lua, env: &Env) -> Answer {
    match round::start(&env.ctx) {
        Ok(()) => ok(lua, ()),
        Err(r) => refuse(lua, r),
    }
}

/// One model round: `true, text` for a final reply, `false, n` for n tool calls to run.
pub async fn ask_model(lua: &Lua, ctx: &EntryCtx) -> Answer {
    match round::ask_model(ctx).await {
        Ok(RoundEnd::Final(text)) => ok(lua, (true, text)),
        Ok(RoundEnd::Calls(n)) => ok(lua, (false, n)),
        Err(r) => refuse(lua, r),
    }
}

/// Call i of the round: `true, alias, args, call id, turn` for a local tool, `false` for a
/// catalog tool, nothing past the end.
pub fn pending_call(lua: &Lua, env: &Env, i: &Value) -> Answer {
    let Some(index) = position(i) else { return ok(lua, Value::Nil) };
    match round::pending_call(&env.ctx, index) {
        None => ok(lua, Value::Nil),
        Some(PendingCall::Local { alias, call_id, turn }) => {
            let arguments = round::call_arguments(&env.ctx, index, |a| convert::to_lua(lua, a, &env.marks)).unwrap_or(Ok(Value::Nil))?;
            ok(lua, (true, alias, arguments, call_id, turn))
        }
        Some(PendingCall::Catalog) => ok(lua, false),
    }
}

/// Records the text a local handler answered for call i.
pub fn set_result(lua: &Lua, env: &Env, i: &Value, text: &Value) -> Answer {
    if let Some(index) = position(i) {
        let text = match text {
            Value::String(s) => s.to_string_lossy(),
            other => convert::scalar_text(lua, other).ok().flatten().unwrap_or_default(),
        };
        round::set_result(&env.ctx, index, text);
    }
    ok(lua, ())
}

/// Runs the catalog calls from call i up to the next local call; answers the next position.
pub async fn run_batch(lua: &Lua, ctx: &EntryCtx, args: Args) -> Answer {
    let Some(index) = position(&args.get(0)) else { return ok(lua, Value::Nil) };
    match round::run_catalog_batch(ctx, index).await {
        Ok(next) => ok(lua, next + 1),
        Err(r) => refuse(lua, r),
    }
}

pub fn finish(lua: &Lua, env: &Env) -> Answer {
    match round::finish(&env.ctx) {
        Ok(()) => ok(lua, ()),
        Err(r) => refuse(lua, r),
    }
}

pub fn abort(env: &Env) -> Answer {
    round::abort(&env.ctx);
    Ok(mlua::MultiValue::new())
}

/// A 1-based Lua position as a 0-based index.
fn position(i: &Value) -> Option<usize> {
    match i {
        Value::Integer(i) if *i >= 1 => Some(*i as usize - 1),
        _ => None,
    }
}
