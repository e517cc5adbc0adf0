//! The Engine functions bootstrap.lua calls as `E.name(...)`, typed. [`Op`] lists the ones that
//! answer at once and [`SuspendOp`] the ones that wait on the host (store, tools, models); each
//! is bound to a Lua function the first time bootstrap.lua reads `E.name`, and from then on Lua
//! calls it directly with no name in sight. The one place a name is read is that binding, which
//! turns it into the enum (an unknown name is an error there, and the test
//! `every_engine_name_in_bootstrap_is_an_op` checks bootstrap.lua's names against the enums).
//!
//! Every Op of a kind is created by the same closure expression, so mlua's generic callback glue
//! is instantiated once per kind, not once per function (the module has a size budget).

use futures::future::LocalBoxFuture;
use futures::FutureExt;
use mlua::{Function, IntoLuaMulti, Lua, MultiValue, Table, Value};
use std::rc::Rc;

use super::chunks::Chunk;
use super::env::{fail, ok, Answer, Args, Env};
use super::values::convert::key_text;
use super::{
    control_api, errors, json, log, loop_api, messages, models_api, preludes, prose, run_values, store_api, tools_api, untrusted, var,
};
use crate::effects::context::EntryCtx;
use crate::error::{ErrorValueKind, RunError, RunErrorKind};
use crate::store::StoreOp;

/// Declares an enum of Engine functions with the name bootstrap.lua reads each by.
macro_rules! engine_functions {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name { $($(#[$vdoc])* $variant,)* }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The key under `E` bootstrap.lua reads.
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }

            pub fn from_name(text: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|op| op.name() == text)
            }
        }
    };
}

engine_functions! {
    /// Engine functions that answer at once.
    Op {
        // The run's control signals and error values.
        IsControl = "is_control",
        ErrorParts = "error_parts",
        // Globals that carry run values.
        Prose = "prose",
        ArgvInitial = "argv_initial",
        ArgvFrozen = "argv_frozen",
        SysGet = "sys_get",
        UiGet = "ui_get",
        PromptGet = "prompt_get",
        PromptList = "prompt_list",
        // The var proxies.
        VarRoot = "var_root",
        VarIndex = "var_index",
        VarNewindex = "var_newindex",
        VarLen = "var_len",
        VarPairs = "var_pairs",
        VarNext = "var_next",
        // json, log, untrusted.
        JsonArray = "json_array",
        JsonEncode = "json_encode",
        JsonDecode = "json_decode",
        Log = "log",
        Untrusted = "untrusted",
        // Pack preludes.
        Preludes = "preludes",
        LoadPrelude = "load_prelude",
        PreludeVar = "prelude_var",
        PreludeLoading = "prelude_loading",
        // Models.
        ModelsUse = "models_use",
        ModelsDefault = "models_default",
        ModelHandle = "model_handle",
        // Tools and Packs.
        ToolsGet = "tools_get",
        ToolsList = "tools_list",
        PacksGet = "packs_get",
        PacksList = "packs_list",
        ToolsOffer = "tools_offer",
        PacksOffer = "packs_offer",
        ToolsOfferLocal = "tools_offer_local",
        ToolsAllowTasks = "tools_allow_tasks",
        ToolsResolve = "tools_resolve",
        LocalBegin = "local_begin",
        LocalEnd = "local_end",
        CallsActive = "calls_active",
        CallsGet = "calls_get",
        // models.loop between its suspending rounds.
        LoopStart = "loop_start",
        LoopCall = "loop_call",
        LoopSet = "loop_set",
        LoopFinish = "loop_finish",
        LoopAbort = "loop_abort",
        // Control flow.
        Jump = "jump",
        RequireFind = "require_find",
        ProsePush = "prose_push",
        ProsePop = "prose_pop",
        TasksSpawn = "tasks_spawn",
        TaskStatus = "task_status",
        TaskCancel = "task_cancel",
        // The Engine's Lua parts (lua/chunks.rs).
        LoadPart = "load_part",
        /// The `messages` object (made when the `basics` part loads).
        MessagesObject = "messages_object",
        /// The Engine's global names, for the checks on Pack preludes.
        EngineGlobals = "engine_globals",
    }
}

engine_functions! {
    /// Engine functions that wait on the host. Each is raced against cancellation.
    SuspendOp {
        StoreWrite = "store_write",
        StoreAppend = "store_append",
        StoreRead = "store_read",
        StoreReadNumbered = "store_read_numbered",
        StoreStrReplace = "store_str_replace",
        StoreDelete = "store_delete",
        StoreExists = "store_exists",
        StoreGlob = "store_glob",
        /// `tools.call` to a catalog tool.
        Tool = "tool",
        /// One model round of `models.loop`.
        Round = "round",
        /// The catalog calls of a round up to its next local call.
        Batch = "batch",
        /// `models.infer` and a model handle's `infer`.
        Infer = "infer",
        /// `call(target, input?)`: a contained chain.
        Call = "call",
        TasksJoin = "tasks_join",
        TasksJoinAny = "tasks_join_any",
        TasksFanout = "tasks_fanout",
    }
}

impl SuspendOp {
    /// The variant's position in [`SuspendOp::ALL`]: how a bound Lua function names its op to
    /// the VM's one async function ([`bind_suspending`]).
    fn code(self) -> i64 {
        SuspendOp::ALL.iter().position(|op| *op == self).map_or(-1, |i| i as i64)
    }

    fn from_code(code: i64) -> Option<SuspendOp> {
        usize::try_from(code).ok().and_then(|i| SuspendOp::ALL.get(i)).copied()
    }
}

/// What a Rust-backed Lua function of a VM does. Every one of them is made by
/// [`rust_function`], a single closure expression, so mlua's callback glue is instantiated once
/// for all of them (the module has a size budget).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RustFn {
    /// `E`'s `__index`: binds an Engine function the first time bootstrap.lua reads its name.
    Bind,
    /// A synchronous Engine function.
    Op(Op),
    /// `messages:user(text)` and its `system` and `assistant` siblings.
    AppendMessage(&'static str),
}

pub fn rust_function(lua: &Lua, env: &Rc<Env>, f: RustFn) -> mlua::Result<Function> {
    let env = env.clone();
    lua.create_function(move |lua, args: MultiValue| match f {
        RustFn::Bind => bind(lua, &env, Args(args)),
        RustFn::Op(op) => call(lua, &env, op, args),
        RustFn::AppendMessage(role) => messages::append_message(&env, role, &Args(args)),
    })
}

/// Makes `E` bind its functions on first read. `E` already holds the Engine's values (`h1`,
/// `json_null`); any other key must name an [`Op`] or a
/// [`SuspendOp`].
pub fn install(lua: &Lua, e: &Table, env: &Rc<Env>) -> mlua::Result<()> {
    let mt = lua.create_table()?;
    mt.raw_set("__index", rust_function(lua, env, RustFn::Bind)?)?;
    e.set_metatable(Some(mt))
}

/// `E.__index(E, name)`: creates the function `name` stands for and keeps it in `E`.
fn bind(lua: &Lua, env: &Rc<Env>, args: Args) -> Answer {
    let (Value::Table(e), Value::String(key)) = (args.get(0), args.get(1)) else {
        return Err(mlua::Error::runtime("Engine functions are named by strings"));
    };
    let name = key.to_str()?.to_string();
    let f = if let Some(op) = Op::from_name(&name) {
        rust_function(lua, env, RustFn::Op(op))?
    } else if let Some(op) = SuspendOp::from_name(&name) {
        bind_suspending(lua, env, op)?
    } else {
        return Err(mlua::Error::runtime(format!("no Engine function named {name:?}")));
    };
    e.raw_set(Value::String(key), Value::Function(f.clone()))?;
    f.into_lua_multi(lua)
}

/// A suspending Engine function: a Lua closure that calls the VM's one async Rust function with
/// the op's code first. mlua compiles a Lua wrapper for every async function it creates, which
/// cost a section entry more than everything else it did; one per VM, made only when a block
/// first suspends, leaves entries that never wait on the host free of it.
fn bind_suspending(lua: &Lua, env: &Rc<Env>, op: SuspendOp) -> mlua::Result<Function> {
    let factory = match env.suspend_factory.get() {
        Some(factory) => factory.clone(),
        None => {
            let factory: Function = super::chunks::Chunk::Suspending.load(lua)?.call(())?;
            let _ = env.suspend_factory.set(factory.clone());
            factory
        }
    };
    let entry = match env.suspending.get() {
        Some(entry) => entry.clone(),
        None => {
            let ctx = env.ctx.clone();
            let g = lua.globals();
            let prompt_value: Value = g.raw_get("coroutine")?;
            g.raw_set("coroutine", Value::Table(env.coroutine.clone()))?;
            let entry = lua.create_async_function(move |lua: Lua, mut args: MultiValue| {
                let op = args.pop_front().and_then(|code| code.as_i64()).and_then(SuspendOp::from_code);
                suspend(lua, ctx.clone(), op, args)
            });
            g.raw_set("coroutine", prompt_value)?;
            let entry = entry?;
            let _ = env.suspending.set(entry.clone());
            entry
        }
    };
    factory.call((entry, op.code()))
}

/// Runs one synchronous Engine function. The match is exhaustive: a new [`Op`] does not compile
/// until it has an implementation.
fn call(lua: &Lua, env: &Env, op: Op, args: MultiValue) -> Answer {
    let a = Args(args);
    match op {
        Op::IsControl => errors::is_control(lua, env, &a.get(0)),
        Op::ErrorParts => errors::error_parts(lua, &a.get(0)),
        Op::Prose => prose::read_prose(lua, env),
        Op::ArgvInitial => run_values::argv_initial(lua, env),
        Op::ArgvFrozen => run_values::argv_frozen(lua, env, &a.get(0)),
        Op::SysGet => run_values::sys_get(lua, env, &a.get(0)),
        Op::UiGet => run_values::ui_get(lua, env, &a.get(0)),
        Op::PromptGet => run_values::prompt_get(lua, env, &a.get(0)),
        Op::PromptList => run_values::prompt_list(lua, env, &a.get(0)),
        Op::VarRoot => var::var_root(lua, env, &a.get(0)),
        Op::VarIndex => var::var_index(lua, env, &a.get(0), &a.get(1)),
        Op::VarNewindex => var::var_newindex(lua, env, &a.get(0), &a.get(1), &a.get(2)),
        Op::VarLen => var::var_len(lua, &a.get(0)),
        Op::VarPairs => var::var_pairs(lua, &a.get(0)),
        Op::VarNext => var::var_next(lua, env, &a.get(0), &a.get(1)),
        Op::JsonArray => json::json_array(lua, env, a.0),
        Op::JsonEncode => json::json_encode(lua, env, &a.get(0)),
        Op::JsonDecode => json::json_decode(lua, env, &a.get(0)),
        Op::Log => log::log(lua, env, &a.get(0)),
        Op::Untrusted => untrusted::untrusted(lua, env, &a.get(0)),
        Op::Preludes => preludes::preludes(lua, env),
        Op::LoadPrelude => preludes::load_prelude(lua, &a.get(0), &a.get(1), &a.get(2)),
        Op::PreludeVar => var::prelude_var(lua, env, &a.get(0)),
        Op::PreludeLoading => preludes::prelude_loading(env, &a.get(0)),
        Op::ModelsUse => models_api::select_role(lua, env, &a.get(0), false),
        Op::ModelsDefault => models_api::select_role(lua, env, &a.get(0), true),
        Op::ModelHandle => models_api::model_handle(lua, env, &a.get(0), &a.get(1)),
        Op::ToolsGet => tools_api::tools_get(lua, env, &a.get(0)),
        Op::ToolsList => tools_api::tools_list(lua, env, &a.get(0)),
        Op::PacksGet => tools_api::packs_get(lua, env, &a.get(0)),
        Op::PacksList => tools_api::packs_list(lua, env, &a.get(0)),
        Op::ToolsOffer => tools_api::tools_offer(lua, env, &a.0),
        Op::PacksOffer => tools_api::packs_offer(lua, env, &a.0),
        Op::ToolsOfferLocal => tools_api::offer_local(lua, env, &a.get(0), &a.get(1), &a.get(2), &a.get(3)),
        Op::ToolsAllowTasks => tools_api::allow_tasks(lua, env, &a.get(0)),
        Op::ToolsResolve => tools_api::resolve(lua, env, &a.get(0), &a.get(1)),
        Op::LocalBegin => tools_api::local_begin(lua, env, &a.get(0)),
        Op::LocalEnd => tools_api::local_end(lua, env, &a),
        Op::CallsActive => tools_api::calls_active(lua, env),
        Op::CallsGet => tools_api::calls_get(lua, env, &a.get(0)),
        Op::LoopStart => loop_api::start(lua, env),
        Op::LoopCall => loop_api::pending_call(lua, env, &a.get(0)),
        Op::LoopSet => loop_api::set_result(lua, env, &a.get(0), &a.get(1)),
        Op::LoopFinish => loop_api::finish(lua, env),
        Op::LoopAbort => loop_api::abort(env),
        Op::Jump => control_api::jump(lua, env, &a.get(0)),
        Op::RequireFind => control_api::require_find(lua, env, &a.get(0)),
        Op::ProsePush => control_api::prose_push(lua, env, &a.get(0)),
        Op::ProsePop => control_api::prose_pop(lua, env),
        Op::TasksSpawn => control_api::spawn(lua, env, &a.get(0), &a.get(1)),
        Op::TaskStatus => control_api::status(lua, env, &a.get(0)),
        Op::TaskCancel => control_api::cancel(lua, env, &a.get(0)),
        Op::LoadPart => load_part(lua, &a.get(0)),
        Op::MessagesObject => messages::messages_object(lua),
        Op::EngineGlobals => ok(lua, lua.create_sequence_from(super::env::ENGINE_GLOBALS.iter().copied())?),
    }
}

/// `E.load_part(name)`: the main function of one of the Engine's Lua parts.
fn load_part(lua: &Lua, name: &Value) -> Answer {
    let part = match name {
        Value::String(s) => Chunk::part(&s.to_string_lossy()),
        _ => None,
    };
    match part {
        Some(part) => ok(lua, part.load(lua)?),
        None => fail(lua, ErrorValueKind::Lua, format!("no Engine part named {}", key_text(name))),
    }
}

/// Runs one suspending Engine function, raced against the run's cancellation.
async fn suspend(lua: Lua, ctx: Rc<EntryCtx>, op: Option<SuspendOp>, args: MultiValue) -> Answer {
    let Some(op) = op else {
        return Err(mlua::Error::runtime("a suspending Engine function was called without its code"));
    };
    let a = Args(args);
    // Exhaustive, as `call` is: a new `SuspendOp` does not compile until it has an arm of its
    // own (the guarded arm covers none; it refuses, while a prelude loads, what is not a store
    // call, since that would wait on tools or models).
    let work: LocalBoxFuture<'_, Answer> = match op {
        SuspendOp::StoreWrite => Box::pin(store_api::call(&lua, &ctx, StoreOp::Write, a)),
        SuspendOp::StoreAppend => Box::pin(store_api::call(&lua, &ctx, StoreOp::Append, a)),
        SuspendOp::StoreRead => Box::pin(store_api::call(&lua, &ctx, StoreOp::Read, a)),
        SuspendOp::StoreReadNumbered => Box::pin(store_api::call(&lua, &ctx, StoreOp::ReadNumbered, a)),
        SuspendOp::StoreStrReplace => Box::pin(store_api::call(&lua, &ctx, StoreOp::StrReplace, a)),
        SuspendOp::StoreDelete => Box::pin(store_api::call(&lua, &ctx, StoreOp::Delete, a)),
        SuspendOp::StoreExists => Box::pin(store_api::call(&lua, &ctx, StoreOp::Exists, a)),
        SuspendOp::StoreGlob => Box::pin(store_api::call(&lua, &ctx, StoreOp::Glob, a)),
        _ if ctx.loading_prelude() => {
            return fail(&lua, ErrorValueKind::Lua, "a prelude cannot call tools or models while it loads (the call would suspend)");
        }
        SuspendOp::Tool => Box::pin(tools_api::catalog_call(&lua, &ctx, a)),
        SuspendOp::Round => Box::pin(loop_api::ask_model(&lua, &ctx)),
        SuspendOp::Batch => Box::pin(loop_api::run_batch(&lua, &ctx, a)),
        SuspendOp::Infer => Box::pin(models_api::infer(&lua, &ctx, a)),
        SuspendOp::Call => Box::pin(control_api::call(&lua, &ctx, a)),
        SuspendOp::TasksJoin => Box::pin(control_api::join(&lua, &ctx, a)),
        SuspendOp::TasksJoinAny => Box::pin(control_api::join_any(&lua, &ctx, a)),
        SuspendOp::TasksFanout => Box::pin(control_api::fanout(&lua, &ctx, a)),
    };
    let cancelled = ctx.run.host.cancelled();
    futures::select! {
        answer = work.fuse() => answer,
        _ = cancelled.fuse() => {
            ctx.run.stop_with(RunError::new(RunErrorKind::Cancelled, "the run was cancelled"));
            fail(&lua, ErrorValueKind::Cancelled, "the run was cancelled")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `E.name` bootstrap.lua reads is an Engine value or one of the two enums, and every
    /// variant is used there: a typo in either place fails here, not in the one prompt that
    /// reaches it.
    #[test]
    fn every_engine_name_in_bootstrap_is_an_op() {
        const VALUES: &[&str] = &["h1", "json_null"];
        let source = [
            include_str!("bootstrap.lua"),
            include_str!("parts/basics.lua"),
            include_str!("parts/control.lua"),
            include_str!("parts/tasks.lua"),
            include_str!("parts/tools.lua"),
            include_str!("parts/guards.lua"),
            include_str!("parts/models.lua"),
            include_str!("parts/preludes.lua"),
            include_str!("parts/proxies.lua"),
            include_str!("parts/unavailable.lua"),
            include_str!("parts/suspending.lua"),
        ]
        .concat();
        let source = source.as_str();
        let mut used = Vec::new();
        for (i, _) in source.match_indices("E.") {
            let before = source[..i].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let name: String = source[i + 2..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            used.push(name);
        }
        // The store calls are bound by a computed name, `E[key]` with `key = 'store_' .. name`,
        // over this list.
        if source.contains("local key = 'store_' .. name") {
            for name in ["write", "append", "read", "read_numbered", "str_replace", "delete", "exists", "glob"] {
                assert!(source.contains(&format!("'{name}'")), "bootstrap.lua's store list lacks {name}");
                used.push(format!("store_{name}"));
            }
        }
        for name in &used {
            assert!(
                VALUES.contains(&name.as_str()) || Op::from_name(name).is_some() || SuspendOp::from_name(name).is_some(),
                "bootstrap.lua reads E.{name}, which is no Engine function"
            );
        }
        let names = Op::ALL.iter().map(|op| op.name()).chain(SuspendOp::ALL.iter().map(|op| op.name()));
        for name in names {
            assert!(used.iter().any(|u| u == name), "{name} is never used by bootstrap.lua");
        }
    }
}
