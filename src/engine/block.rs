//! The block runner: the one loop that runs the H1 pass and every section entry, call chains,
//! tasks and fanout arms. There is only one so that they cannot drift apart: what differs between
//! them is a parameter the caller sets, visible at the call site, not a second loop with its own
//! idea of VMs, prose or errors. A caller picks the entry (section or H1, chain, seeded item);
//! the runner builds the fresh VM, replays the shared library, runs each block over its pending
//! prose, and applies the scalar return rule.

use futures::future::poll_fn;
use mlua::{AnyUserData, Lua, MultiValue, Value};
use serde_json::Value as Json;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

use crate::effects::context::{backend_failure, Chain, EntryCtx, RunShared};
use crate::effects::events::Event;
use crate::effects::memory::Held;
use crate::error::{h1_gate_failed, ErrorValueKind, RunError, RunErrorKind};
use crate::lua::budget::Budget;
use crate::lua::values::convert;
use crate::lua::{self, Vm};
use crate::prompt::{Body, LuaSource};

/// How a section entry ended.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryEnd {
    /// A block returned a scalar: the chain's result, as text.
    Returned(String),
    /// The blocks ran out without a return: the walk falls through.
    FellThrough,
    /// A block called `jump`: the walk goes on at this section.
    Jumped(usize),
}

/// Tells the host that an entry's conversation has ended, when dropped.
struct ConversationEnd(Rc<RunShared>, u64);

impl Drop for ConversationEnd {
    fn drop(&mut self) {
        self.0.host.end_conversation(self.1);
    }
}

/// How one chunk ended: its return values, or a `jump` that unwound it.
enum Flow {
    Values(MultiValue),
    Jump(usize),
}

/// Runs one entry: the H1 pass (`section == None`) or one section, in a fresh VM. The chain's
/// seeded item goes to its first section.
pub async fn run_entry(run: &Rc<RunShared>, chain: &Rc<Chain>, section: Option<usize>) -> Result<EntryEnd, RunError> {
    // Entries that each end inside their slice (a `jump` loop: every entry has a fresh budget)
    // never reach the budget's turn: the host gets its turn here too, and a cancellation ends
    // the run between entries.
    if run.host.now_ms() - run.last_turn_ms.get() >= crate::lua::budget::TURN_MS {
        run.host.yield_now().await;
        run.last_turn_ms.set(run.host.now_ms());
    }
    run.check_cancelled();
    if let Some(stop) = run.stop.borrow().clone() {
        return Err(stop);
    }
    let id = if section.is_some() { run.next_id() } else { 0 };
    let item = if section.is_some() { chain.item.borrow_mut().take() } else { None };
    let worker = if section.is_some() { chain.worker.borrow_mut().take() } else { None };
    // One conversation per entry: its id counts the run's entries, the H1 pass included.
    let conversation = run.last_conversation.get() + 1;
    if conversation > run.limits.section_entries {
        let heading = section.map_or_else(|| format!("# {}", run.prompt.title), |i| run.prompt.sections[i].heading.clone());
        let err = RunError::new(
            RunErrorKind::Limit,
            format!(
                "section entry limit of {} reached entering {heading}: the run entered sections that many times \
                 (a jump or call loop that never ends?); limits.sectionEntries raises it",
                run.limits.section_entries
            ),
        )
        .in_section(&heading);
        run.stop_with(err.clone());
        return Err(err);
    }
    run.last_conversation.set(conversation);
    // However the entry ends (even dropped mid-await when its task is cancelled), the host's
    // copy of its conversation goes with it.
    let _ended = ConversationEnd(run.clone(), conversation);
    let ctx = Rc::new(EntryCtx::new(run.clone(), chain.clone(), section, id, item, conversation));
    ctx.emit(Event::SectionStarted, || {
        let mut started = crate::obj!({ "id": id, "heading": ctx.heading() });
        if let Some(caller) = chain.caller {
            started["caller"] = Json::from(caller);
        }
        started
    });
    let body = match section {
        Some(i) => &run.prompt.sections[i].body,
        None => &run.prompt.h1,
    };
    let result = match worker {
        Some(code) => run_worker(&ctx, &code).await,
        None => run_body(&ctx, body).await,
    }
    .map_err(|e| e.in_section(&ctx.heading()));
    // The entry's conversation ends with it.
    let _ = chain.memory.set(Held::Messages, 0);
    let outcome = match &result {
        Ok(EntryEnd::Returned(_)) => "returned",
        Ok(EntryEnd::FellThrough) => "fell_through",
        Ok(EntryEnd::Jumped(_)) => "jumped",
        Err(_) => "failed",
    };
    ctx.emit(Event::SectionFinished, || crate::obj!({ "id": id, "outcome": outcome }));
    result
}

/// A fresh VM with the preludes installed and the shared library replayed: where every entry's
/// blocks run.
async fn prepare_vm(ctx: &Rc<EntryCtx>) -> Result<Vm, RunError> {
    let vm = lua::build_vm(ctx).map_err(|e| lua::setup_error(ctx, e))?;
    // Preludes install after the Engine globals and before the shared library and any block.
    if lua::has_preludes(ctx) {
        // Preludes cannot reach `jump`.
        run_function(ctx, &vm, vm.install_preludes.clone(), ()).await?;
    }
    if let Some(shared) = &ctx.run.prompt.shared {
        // The shared library's top-level return is discarded: the replay is a library load.
        ctx.prose.start(String::new());
        ctx.set_loading_shared(true);
        let replayed = run_chunk(ctx, &vm, shared, "lua shared").await;
        ctx.set_loading_shared(false);
        replayed?;
    }
    Ok(vm)
}

/// A fanout arm whose worker is a Lua function: the function (`item` and `sys.index` its
/// arguments) is the entry's one block, with no prose.
async fn run_worker(ctx: &Rc<EntryCtx>, code: &[u8]) -> Result<EntryEnd, RunError> {
    let vm = prepare_vm(ctx).await?;
    // The code is our own dump of a function compiled from the prompt's text (never a prompt's bytes).
    let f = vm.lua.load(code).set_mode(mlua::chunk::ChunkMode::Binary).into_function().map_err(|e| lua::setup_error(ctx, e))?;
    let item = match &ctx.item {
        Some(j) => convert::to_lua(&vm.lua, j, &vm.marks).map_err(|e| lua::setup_error(ctx, e))?,
        None => Value::Nil,
    };
    let index = ctx.chain.index.map_or(Value::Nil, |i| Value::Integer(i as i64));
    match run_function(ctx, &vm, f, (item, index)).await? {
        Flow::Jump(target) => Ok(EntryEnd::Jumped(target)),
        Flow::Values(values) => Ok(returned(&vm, &values)?.map_or(EntryEnd::FellThrough, EntryEnd::Returned)),
    }
}

async fn run_body(ctx: &Rc<EntryCtx>, body: &Body) -> Result<EntryEnd, RunError> {
    // A section without Lua never builds a VM: its prose is never read.
    if body.blocks.is_empty() && !(ctx.is_h1() && ctx.run.prompt.shared.is_some()) {
        return Ok(EntryEnd::FellThrough);
    }
    let vm = prepare_vm(ctx).await?;
    for block in &body.blocks {
        ctx.prose.start(block.prose.clone());
        let heading = ctx.heading();
        let flow = run_chunk(ctx, &vm, &block.lua, &heading).await.map_err(|e| e.in_block(&heading, block.lua.line))?;
        if lua::var_replaced(&vm.lua) {
            let message = "this block assigned the global var: var is the run's JSON state and cannot be replaced; \
                           set its fields instead (var.name = value, var.name = nil)";
            return Err(RunError::new(RunErrorKind::Lua, message).in_block(&heading, block.lua.line));
        }
        let values = match flow {
            Flow::Values(values) => values,
            Flow::Jump(target) => {
                if ctx.is_h1() {
                    freeze_argv(ctx, &vm)?;
                }
                return Ok(EntryEnd::Jumped(target));
            }
        };
        if let Some(result) = returned(&vm, &values).map_err(|e| e.in_block(&heading, block.lua.line))? {
            return Ok(EntryEnd::Returned(result));
        }
    }
    if ctx.is_h1() {
        freeze_argv(ctx, &vm)?;
    }
    Ok(EntryEnd::FellThrough)
}

/// The scalar return rule: a block's first returned value, as text, when it is a non-nil scalar
/// (a table, function or userdata is an error).
fn returned(vm: &Vm, values: &MultiValue) -> Result<Option<String>, RunError> {
    let first = values.front().unwrap_or(&Value::Nil);
    convert::scalar_text(&vm.lua, first).map_err(|m| RunError::new(RunErrorKind::Lua, m))
}

/// After the H1 pass, what its blocks left in argv becomes the chain's frozen argv.
fn freeze_argv(ctx: &EntryCtx, vm: &Vm) -> Result<(), RunError> {
    let v: Value = vm.argv_value.call(()).map_err(|e| lua::setup_error(ctx, e))?;
    let frozen = match convert::to_json(&v, &vm.marks) {
        Ok(Json::Null) => None,
        Ok(j) => Some(j),
        Err(e) => {
            return Err(RunError::new(RunErrorKind::Lua, format!("argv must hold JSON data when the H1 pass ends: {}", e.describe())))
        }
    };
    *ctx.chain.argv.borrow_mut() = frozen;
    Ok(())
}

/// Compiles one chunk (a block or the shared library) and runs it to completion on a fresh
/// coroutine under the Engine's raw pcall. Returns the chunk's return values.
async fn run_chunk(ctx: &Rc<EntryCtx>, vm: &Vm, source: &LuaSource, chunk_name: &str) -> Result<Flow, RunError> {
    // Text only, at its line in the file (so Lua's positions are file lines).
    let f = lua::load_text(&vm.lua, &source.code, source.line, chunk_name)
        .map_err(|e| lua::load_error(e, chunk_name).unwrap_or_else(|other| lua::setup_error(ctx, other)))?;
    run_function(ctx, vm, f, ()).await
}

/// Runs a Lua function on a fresh coroutine under the Engine's raw pcall, with the budget reset
/// and the store flushed afterwards; an uncaught error becomes the run error.
async fn run_function(ctx: &Rc<EntryCtx>, vm: &Vm, f: mlua::Function, args: impl mlua::IntoLuaMulti) -> Result<Flow, RunError> {
    lua::budget::restart(&vm.lua).map_err(|e| lua::setup_error(ctx, e))?;
    let thread = vm.lua.create_thread(vm.run_block.clone()).map_err(|e| lua::setup_error(ctx, e))?;
    let mut call = args.into_lua_multi(&vm.lua).map_err(|e| lua::setup_error(ctx, e))?;
    call.push_front(Value::Function(f));
    let fut = thread.into_async::<MultiValue>(call).map_err(|e| lua::setup_error(ctx, e))?;
    let outcome = drive(ctx, &vm.budget, fut).await;
    // A block's store changes go to the backend as one batch when it ends, however it ended.
    if let Err(detail) = ctx.run.store.flush().await {
        ctx.run.stop_with(backend_failure(&*ctx.run.host, detail));
    }
    // The flushed writes no longer count against the memory ceiling (a shrink is never refused).
    let _ = ctx.chain.memory.set(Held::Store, ctx.run.store.held_bytes());
    if let Some(stop) = ctx.run.stop.borrow().clone() {
        return Err(stop);
    }
    if let Some(target) = ctx.take_jump() {
        return Ok(Flow::Jump(target));
    }
    let mut values = outcome.map_err(|e| lua::setup_error(ctx, e))?;
    let ok = matches!(values.pop_front(), Some(Value::Boolean(true)));
    if ok {
        Ok(Flow::Values(values))
    } else {
        Err(classify(ctx, vm, values.pop_front().unwrap_or(Value::Nil)))
    }
}

/// Polls the block's coroutine. When the budget's hook yields for a time slice (`lua::budget`),
/// the host's event loop gets a turn (and the abort signal a look) before the block goes on.
///
/// The hook may yield inside mlua's async-call loop, after an Engine future answered `Pending`
/// and before the loop yields to wait for it. Resumed after the turn, that loop yields at once
/// without polling the future again; a wake-up that came during the turn (every fanout arm it
/// waited on finishing) was spent on the turn, so the block would wait forever. The first
/// `Pending` after a turn therefore wakes the block once more, and that poll reaches the future.
async fn drive(ctx: &EntryCtx, budget: &Budget, fut: mlua::thread::AsyncThread<MultiValue>) -> mlua::Result<MultiValue> {
    let mut fut = pin!(fut);
    let mut after_turn = false;
    loop {
        let step = poll_fn(|cx| match fut.as_mut().poll(cx) {
            Poll::Ready(r) => Poll::Ready(Some(r)),
            Poll::Pending if budget.take_slice_yield() => Poll::Ready(None),
            Poll::Pending => {
                if std::mem::take(&mut after_turn) {
                    cx.waker().wake_by_ref();
                }
                Poll::Pending
            }
        })
        .await;
        match step {
            Some(r) => return r,
            None => {
                ctx.run.host.yield_now().await;
                budget.turn_given();
                ctx.run.check_cancelled();
                after_turn = true;
            }
        }
    }
}

/// Turns the value an uncaught error left into the run error (docs/language.md, "The sandbox and
/// the Engine globals": error value kinds and run error kinds).
fn classify(ctx: &EntryCtx, vm: &Vm, err: Value) -> RunError {
    let lua_error = |m: String| RunError::new(RunErrorKind::Lua, m);
    if lua::is_memory_error(&err) {
        return lua::memory_limit_error(ctx);
    }
    match &err {
        Value::String(s) => lua_error(with_hint(s.to_string_lossy())),
        Value::Table(t) if vm.error_values.raw_get::<bool>(t.clone()).unwrap_or(false) => {
            let kind: String = t.raw_get("kind").unwrap_or_default();
            let message: String = t.raw_get::<mlua::LuaString>("message").map(|s| s.to_string_lossy()).unwrap_or_default();
            if ctx.is_h1() && vm.substitution_errors.raw_get::<bool>(t.clone()).unwrap_or(false) {
                return h1_gate_failed(&message);
            }
            // A prompt may raise an error value with a kind of its own: that is a Lua error.
            let kind = ErrorValueKind::from_field(&kind).map_or(RunErrorKind::Lua, ErrorValueKind::run_kind);
            let mut e = RunError::new(kind, message);
            // The value itself travels on, so a caller, joiner or fanout sees the same error.
            e.value = convert::to_json(&err, &vm.marks).ok().map(Box::new);
            e
        }
        Value::Table(t) => match t.raw_get::<Value>("message") {
            Ok(Value::String(m)) => lua_error(m.to_string_lossy()),
            _ => lua_error(format!("(error object is a {} value)", err.type_name())),
        },
        Value::Nil => lua_error("nil".into()),
        Value::Error(_) => lua_error(lua::mlua_error_message(&err).unwrap_or_default()),
        Value::UserData(ud) => lua_error(userdata_text(&vm.lua, ud)),
        other => lua_error(
            vm.lua
                .coerce_string(other.clone())
                .ok()
                .flatten()
                .map(|s| s.to_string_lossy())
                .unwrap_or_else(|| format!("(error object is a {} value)", other.type_name())),
        ),
    }
}

/// Lua's own message, with what to do instead where a newcomer reaches for a global the sandbox
/// does not have.
fn with_hint(message: String) -> String {
    let hint = if message.ends_with("attempt to call a nil value (global 'print')") {
        "Runvil has no print: log(message) writes a line to the run's log (the CLI shows it on stderr)"
    } else {
        return message;
    };
    format!("{message}; {hint}")
}

fn userdata_text(lua: &Lua, ud: &AnyUserData) -> String {
    let tostring: Option<mlua::Function> = lua.globals().raw_get("tostring").ok();
    tostring.and_then(|f| f.call::<String>(ud.clone()).ok()).unwrap_or_else(|| "(error object is a userdata value)".into())
}
