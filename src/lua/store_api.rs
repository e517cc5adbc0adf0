//! The `store` global's Rust side: the eight calls as suspending (async) functions, their
//! argument checks, and store errors as error values of kind `store`.
//!
//! While the shared library loads, argument conversion follows Lua's own coercion (a number
//! passed for a string becomes text) with a generic conversion message (`004`, "How store calls
//! run"); everywhere else the chapter's `... must be a string, got {type}` messages apply.

use mlua::{Lua, Value};

use super::env::{fail, ok, ok_text, Answer, Args};
use super::values::convert::lua_type;
use crate::effects::context::{backend_failure, EntryCtx};
use crate::effects::memory::Held;
use crate::error::{ErrorValueKind, RunError, RunErrorKind};
use crate::store::claims::Accessor;
use crate::store::view::{Failure, Store, StoreError};
use crate::store::StoreOp;

/// A required string argument, as bytes (the store keeps what Lua gives it).
fn string_arg(ctx: &EntryCtx, v: &Value, name: &str) -> Result<Vec<u8>, String> {
    match v {
        Value::String(s) => Ok(s.as_bytes().to_vec()),
        Value::Integer(i) if ctx.loading_shared() => Ok(i.to_string().into_bytes()),
        Value::Number(_) if ctx.loading_shared() => Ok(lua_text(v).into_bytes()),
        other if ctx.loading_shared() => Err(format!("error converting Lua {} to String (expected string or number)", other.type_name())),
        other => Err(format!("{name} must be a string, got {}", lua_type(other))),
    }
}

/// A number as Lua's own `tostring` writes it (the shared library's coercion).
fn lua_text(v: &Value) -> String {
    match v {
        Value::Number(n) if n.fract() == 0.0 && n.abs() < 1e15 => format!("{}.0", *n as i64),
        Value::Number(n) => serde_json::Number::from_f64(*n).map(|j| j.to_string()).unwrap_or_else(|| "nan".into()),
        _ => String::new(),
    }
}

/// An optional line bound: nil, an integer, or a float with a whole value.
fn bound_arg(ctx: &EntryCtx, v: &Value, name: &str) -> Result<Option<i64>, String> {
    match v {
        Value::Nil => Ok(None),
        Value::Integer(i) => Ok(Some(*i)),
        Value::Number(n) if n.fract() == 0.0 && *n >= -9.223_372_036_854_776e18 && *n < 9.223_372_036_854_776e18 => Ok(Some(*n as i64)),
        Value::String(s) if ctx.loading_shared() => s
            .to_str()
            .ok()
            .and_then(|t| t.trim().parse::<i64>().ok())
            .map(Some)
            .ok_or_else(|| "error converting Lua string to i64 (expected number)".to_string()),
        other if ctx.loading_shared() => Err(format!("error converting Lua {} to i64 (expected number)", other.type_name())),
        other => Err(format!("{name} must be an integer, got {}", lua_type(other))),
    }
}

fn path_text(bytes: Vec<u8>) -> String {
    // Paths are compared as the prompt wrote them; bytes that are not UTF-8 cannot name a file
    // and fail the control/character rules through their replacement characters.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Turns a store failure into the check-convention answer, or stops the run.
fn answer_failure(lua: &Lua, ctx: &EntryCtx, failure: Failure) -> Answer {
    match failure {
        Failure::Store(e) => store_error(lua, &e),
        Failure::Conflict(message) => {
            ctx.run.stop_with(RunError::new(RunErrorKind::Determinism, message.clone()));
            fail(lua, ErrorValueKind::Store, message)
        }
        Failure::Backend(detail) => {
            ctx.run.stop_with(backend_failure(&*ctx.run.host, detail));
            fail(lua, ErrorValueKind::Store, "store backend failure")
        }
        Failure::TooLarge(bytes) => {
            let message = ctx.refuse_incoming(crate::host::Incoming::StoreFile, bytes);
            fail(lua, ErrorValueKind::Store, message)
        }
    }
}

fn store_error(lua: &Lua, e: &StoreError) -> Answer {
    let fields = lua.create_table()?;
    fields.raw_set("reason", e.reason)?;
    if let Some(p) = &e.path {
        fields.raw_set("path", lua.create_string(p)?)?;
    }
    if let Some(r) = e.rule {
        fields.raw_set("rule", r)?;
    }
    if let Some(a) = &e.anchor {
        fields.raw_set("anchor", lua.create_string(a)?)?;
    }
    if let Some(c) = e.count {
        fields.raw_set("count", c)?;
    }
    let mut mv = fail(lua, ErrorValueKind::Store, &e.message)?;
    mv.push_back(Value::Table(fields));
    Ok(mv)
}

/// One of the eight `store.*` calls with its Lua arguments. Afterwards what the store's view
/// holds is charged against the memory ceiling (loaded and written contents grow it).
pub async fn call(lua: &Lua, ctx: &EntryCtx, op: StoreOp, args: Args) -> Answer {
    let answer = run_call(lua, ctx, op, args).await?;
    if let Err(message) = ctx.hold_total(Held::Store, ctx.run.store.held_bytes()) {
        return fail(lua, ErrorValueKind::Lua, message);
    }
    Ok(answer)
}

async fn run_call(lua: &Lua, ctx: &EntryCtx, op: StoreOp, args: Args) -> Answer {
    let arg = |i| args.get(i);
    // Every access is made as the calling chain at its clock now: the store's claims order
    // accesses by it to find conflicts between concurrent chains (store/claims.rs).
    let store = ctx.run.store.clone();
    let clock = ctx.chain.identity.clock();
    let who = Accessor { chain: ctx.chain.id(), clock: &clock };
    match op {
        StoreOp::Write | StoreOp::Append => write_like(lua, ctx, &store, who, &args, op == StoreOp::Append).await,
        StoreOp::Read | StoreOp::ReadNumbered => read_like(lua, ctx, &store, who, &args, op == StoreOp::ReadNumbered).await,
        StoreOp::StrReplace => {
            let strings = (|| -> Result<_, String> {
                Ok((string_arg(ctx, &arg(0), "path")?, string_arg(ctx, &arg(1), "old")?, string_arg(ctx, &arg(2), "new")?))
            })();
            let (p, old, new) = match strings {
                Ok(s) => s,
                Err(m) => return fail(lua, ErrorValueKind::Lua, m),
            };
            let (old, new) = (String::from_utf8_lossy(&old).into_owned(), String::from_utf8_lossy(&new).into_owned());
            match store.str_replace(who, &path_text(p), &old, &new).await {
                Ok(()) => ok(lua, ()),
                Err(f) => answer_failure(lua, ctx, f),
            }
        }
        StoreOp::Delete | StoreOp::Exists | StoreOp::Glob => {
            let name = if op == StoreOp::Glob { "pattern" } else { "path" };
            let p = match string_arg(ctx, &arg(0), name) {
                Ok(p) => path_text(p),
                Err(m) => return fail(lua, ErrorValueKind::Lua, m),
            };
            let result = match op {
                StoreOp::Delete => store.delete(who, &p).await.map(|()| Value::Nil),
                StoreOp::Exists => store.exists(who, &p).map(Value::Boolean),
                _ => match store.glob(who, &p) {
                    Ok(found) => Ok(Value::Table(lua.create_sequence_from(found)?)),
                    Err(f) => Err(f),
                },
            };
            match result {
                Ok(v) => ok(lua, v),
                Err(f) => answer_failure(lua, ctx, f),
            }
        }
    }
}

async fn write_like(lua: &Lua, ctx: &EntryCtx, store: &Store, who: Accessor<'_>, args: &Args, append: bool) -> Answer {
    let p = match string_arg(ctx, &args.get(0), "path") {
        Ok(p) => path_text(p),
        Err(m) => return fail(lua, ErrorValueKind::Lua, m),
    };
    let contents = match string_arg(ctx, &args.get(1), "contents") {
        Ok(c) => c,
        Err(m) => return fail(lua, ErrorValueKind::Lua, m),
    };
    let result = if append { store.append(who, &p, &contents).await } else { store.write(who, &p, &contents).await };
    match result {
        Ok(()) => ok(lua, ()),
        Err(f) => answer_failure(lua, ctx, f),
    }
}

async fn read_like(lua: &Lua, ctx: &EntryCtx, store: &Store, who: Accessor<'_>, args: &Args, numbered: bool) -> Answer {
    let parsed = (|| -> Result<_, String> {
        Ok((string_arg(ctx, &args.get(0), "path")?, bound_arg(ctx, &args.get(1), "start")?, bound_arg(ctx, &args.get(2), "end")?))
    })();
    let (p, start, end) = match parsed {
        Ok(v) => v,
        Err(m) => return fail(lua, ErrorValueKind::Lua, m),
    };
    match store.read(who, &path_text(p), start, end, numbered).await {
        Ok(read) => ok_text(lua, read.as_bytes()),
        Err(f) => answer_failure(lua, ctx, f),
    }
}
