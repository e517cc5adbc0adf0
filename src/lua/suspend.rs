//! The one suspending entry point. Every Engine call that waits on the host (store, tools,
//! model rounds) goes through `E.suspend(op, ...)`: one async function in the module instead of
//! one per call (each costs a state machine and mlua's async glue; the size budget is tight), and
//! one place that races the work against cancellation.

use futures::future::LocalBoxFuture;
use futures::FutureExt;
use mlua::{Lua, MultiValue, Table, Value};
use std::rc::Rc;

use super::values::{fail, Answer};
use super::{globals, store_api, tools_api};
use crate::engine::context::EntryCtx;
use crate::error::{RunError, RunErrorKind};

pub fn install(lua: &Lua, e: &Table, ctx: &Rc<EntryCtx>) -> mlua::Result<()> {
    let c = ctx.clone();
    e.raw_set(
        "suspend",
        lua.create_async_function(move |lua: Lua, mut args: MultiValue| {
            let ctx = c.clone();
            async move {
                let op = match args.pop_front() {
                    Some(Value::String(s)) => s.to_string_lossy(),
                    _ => String::new(),
                };
                if ctx.loading_prelude.get() && op != "store" {
                    return fail(&lua, "lua", "a prelude cannot call tools or models while it loads (the call would suspend)");
                }
                let work: LocalBoxFuture<'_, Answer> = match op.as_str() {
                    "store" => Box::pin(store_api::call(&lua, &ctx, args)),
                    "tool" => Box::pin(tools_api::catalog_call(&lua, &ctx, args)),
                    "round" => Box::pin(tools_api::loop_round(&lua, &ctx)),
                    "batch" => Box::pin(tools_api::loop_batch(&lua, &ctx, args)),
                    "infer" => Box::pin(globals::infer(&lua, &ctx, args)),
                    other => return fail(&lua, "lua", format!("no suspending call named {other:?}")),
                };
                let cancelled = ctx.run.host.cancelled();
                futures::select! {
                    answer = work.fuse() => answer,
                    _ = cancelled.fuse() => {
                        ctx.run.stop_with(RunError::new(RunErrorKind::Cancelled, "the run was cancelled"));
                        fail(&lua, "cancelled", "the run was cancelled")
                    }
                }
            }
        })?,
    )
}
