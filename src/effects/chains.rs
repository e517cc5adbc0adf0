//! Starting chains and joining them (docs/language.md, "Runs, walks and chains"; `004`, "Spawn
//! and join"): `call` runs a contained chain to its end and hands back its
//! result; `tasks.spawn`, fanout arms and the model's `task` start a [`Task`] beside their owner.
//!
//! What a new chain gets: a clone of its starter's `var`, the starter's argument string and
//! frozen argv unless an input replaces them (then argv is parsed fresh from it), one more level
//! of depth, and the seeded item for its first section. A call shares its caller's store
//! identity; a task has its own, forked from its owner's.

use futures::future::AbortHandle;
use serde_json::Value as Json;
use std::cell::RefCell;
use std::rc::Rc;

use super::context::{Chain, EntryCtx, RunShared, MAX_DEPTH};
use super::events::Event;
use super::identity::Identity;
use super::memory::{json_size, Held, Meter};
use super::tasks::{first_finished, Starter, Task, TaskEnd};
use crate::error::{ErrorValueKind, RunError, RunErrorKind};
use crate::prompt::Prompt;

/// argv for an argument string (`001`, "When argv is nil"): without `args:` the implicit
/// declaration wraps the string; with one, argv is its JSON parse, nil when it does not parse or
/// is null.
pub fn parse_argv(prompt: &Prompt, args: &str) -> Option<Json> {
    match &prompt.front.args {
        None => Some(crate::obj!({ "prose": args })),
        Some(_) => crate::json_text::parse_str(args).ok().filter(|j| !j.is_null()),
    }
}

/// What a new chain starts from.
pub struct ChainStart {
    pub input: Option<String>,
    pub item: Option<Json>,
    pub index: Option<usize>,
    /// A worker function's code (fanout arms only).
    pub worker: Option<Rc<[u8]>>,
}

/// What a fanout runs in each arm.
#[derive(Clone)]
pub enum Worker {
    /// A section (and the walk from it).
    Section(usize),
    /// A Lua function, compiled, run in a fresh VM per arm at the caller's section.
    Function { section: usize, code: Rc<[u8]> },
}

/// Refuses a chain that would nest past the depth limit below `owner`.
fn check_depth(owner: &Chain) -> Result<(), String> {
    if owner.depth >= MAX_DEPTH {
        return Err(format!("call depth limit of {MAX_DEPTH} reached"));
    }
    Ok(())
}

/// A new chain one level below `owner`'s, with `identity`.
fn new_chain(ctx: &EntryCtx, identity: Rc<Identity>, start: ChainStart) -> Result<Rc<Chain>, String> {
    let (run, owner) = (&*ctx.run, &*ctx.chain);
    check_depth(owner)?;
    let (args, argv) = match start.input {
        Some(input) => {
            let argv = parse_argv(&run.prompt, &input);
            (input, argv)
        }
        None => (owner.args.clone(), owner.argv.borrow().clone()),
    };
    let var = owner.var.borrow().clone();
    let memory = Meter::new(run.limits.memory_bytes);
    memory
        .charge(Held::Var, json_size(&var) as i64)
        .map_err(|r| format!("memory ceiling of {} bytes exceeded: {}", r.ceiling, r.describe()))?;
    Ok(Rc::new(Chain {
        identity,
        args,
        argv: RefCell::new(argv),
        var: Rc::new(RefCell::new(var)),
        depth: owner.depth + 1,
        item: RefCell::new(start.item),
        worker: RefCell::new(start.worker),
        index: start.index,
        memory,
        tasks: RefCell::new(Vec::new()),
        caller: Some(ctx.id),
    }))
}

/// `call(target, input?)`: runs a contained chain from `section` to its end; its result, or
/// `None` when its walk ran out. The chain shares the caller's store identity.
pub async fn call(ctx: &EntryCtx, section: usize, input: Option<String>) -> Result<Option<String>, RunError> {
    let start = ChainStart { input, item: None, index: None, worker: None };
    let chain = new_chain(ctx, ctx.chain.identity.clone(), start).map_err(|m| RunError::new(RunErrorKind::Lua, m))?;
    (ctx.run.walk_chain)(ctx.run.clone(), chain, section).await
}

/// Starts a task at `section` beside `ctx`'s chain: a fork in the store's order.
pub fn spawn(ctx: &EntryCtx, section: usize, start: ChainStart, starter: Starter) -> Result<Rc<Task>, String> {
    let run = &ctx.run;
    let owner = &ctx.chain;
    // Checked before the task is numbered and forked: a refused spawn takes no id.
    check_depth(owner)?;
    let id = owner.identity.next_task_id();
    let clock = owner.identity.fork(&id);
    let item = start.item.clone();
    let chain = new_chain(ctx, Identity::new(id.clone(), clock), start)?;
    let (abort, registration) = AbortHandle::new_pair();
    let task = Rc::new(Task::new(id.clone(), section, item, starter, chain.identity.clone(), abort));
    owner.tasks.borrow_mut().push(task.clone());

    let s = &run.prompt.sections[section];
    run.emit(Event::TaskStarted, Some(&s.name), || crate::obj!({ "id": id, "target": s.heading, "owner": owner.id(), "entry": ctx.id }));
    let (run2, task2) = (run.clone(), task.clone());
    let body = async move {
        let outcome = (run2.walk_chain)(run2.clone(), chain, section).await;
        if task2.finish(TaskEnd { outcome, cancelled: false }) {
            emit_finished(&run2, &task2);
        }
    };
    let future = futures::future::Abortable::new(body, registration);
    run.tasks.start(
        task.clone(),
        Box::pin(async move {
            let _ = future.await;
        }),
    );
    Ok(task)
}

/// `task_finished`, once a task has ended.
fn emit_finished(run: &RunShared, task: &Task) {
    let name = &run.prompt.sections[task.section].name;
    run.emit(Event::TaskFinished, Some(name), || crate::obj!({ "id": task.id, "status": task.status().as_str() }));
}

/// The heading a task started at.
pub fn target<'a>(run: &'a RunShared, task: &Task) -> &'a str {
    &run.prompt.sections[task.section].heading
}

/// Cancels a running task (and reports it). Returns false when it had already ended.
pub fn cancel(run: &RunShared, task: &Task) -> bool {
    let cancelled = task.cancel();
    if cancelled {
        emit_finished(run, task);
    }
    cancelled
}

/// Delivering a task's result joins it: everything it did comes ahead of the owner's next step.
/// The task must have ended.
pub fn join(owner: &Identity, task: &Task) {
    if task.joined.replace(true) {
        return;
    }
    owner.join(&task.identity);
}

/// A chain's end joins every task it owns, waiting for those still running.
pub async fn join_owned(chain: &Chain) {
    loop {
        let owned: Vec<Rc<Task>> = chain.tasks.borrow().clone();
        for task in &owned {
            task.finished().await;
            join(&chain.identity, task);
        }
        // A task started while the last ones were awaited (by a model notice, say) is joined too.
        if chain.tasks.borrow().len() == owned.len() {
            return;
        }
    }
}

/// What a delivered task reports: its result fields (`ok`, `text`, `item`, `exhausted`, `error`).
pub struct Delivered {
    pub ok: bool,
    pub text: String,
    pub item: Option<Json>,
    /// Ended by running out of model rounds (`round_cap`): a soft failure.
    pub exhausted: bool,
    /// The error value's fields when not ok.
    pub error: Option<Json>,
    /// Still running (a timed join's member that had not ended).
    pub running: bool,
}

/// The error value a failed chain hands back: the uncaught error value's fields, or one made
/// from the run error.
pub fn error_value(e: &RunError) -> Json {
    match &e.value {
        Some(v) => (**v).clone(),
        None => {
            let kind = match e.kind {
                RunErrorKind::Tool => ErrorValueKind::Tool,
                RunErrorKind::Model => ErrorValueKind::Model,
                RunErrorKind::Vfs => ErrorValueKind::Store,
                RunErrorKind::Cancelled => ErrorValueKind::Cancelled,
                _ => ErrorValueKind::Lua,
            };
            crate::obj!({ "kind": kind.as_str(), "message": e.message })
        }
    }
}

/// The error a fanout raises for its failed arm: the arm's kind, a message that names the arm
/// (its 1-based index and item) before the arm's own message, and the arm's error value as
/// `cause`, with `arm` and `item` as fields a caller can read.
fn arm_failure(error: RunError, arm: usize, item: Option<&Json>) -> RunError {
    let cause = error_value(&error);
    let item_text = item.map(|j| {
        let text = j.to_string();
        match text.char_indices().nth(60) {
            Some((cut, _)) => format!("{}...", &text[..cut]),
            None => text,
        }
    });
    let named = match &item_text {
        Some(t) => format!("tasks.fanout: arm {arm} (item {t}) failed: {}", error.message),
        None => format!("tasks.fanout: arm {arm} failed: {}", error.message),
    };
    let kind = cause.get("kind").cloned().unwrap_or_else(|| Json::from(ErrorValueKind::Lua.as_str()));
    let mut value = crate::obj!({ "kind": kind, "message": named, "arm": arm, "cause": cause });
    if let Some(item) = item {
        value["item"] = item.clone();
    }
    RunError { message: named, value: Some(Box::new(value)), ..error }
}

/// A task's result as its deliverer reports it.
pub fn delivered(task: &Task) -> Delivered {
    let Some(end) = task.end() else {
        return Delivered { ok: false, text: String::new(), item: task.item.clone(), exhausted: false, error: None, running: true };
    };
    match &end.outcome {
        Ok(text) => Delivered {
            ok: true,
            text: text.clone().unwrap_or_default(),
            item: task.item.clone(),
            exhausted: false,
            error: None,
            running: false,
        },
        Err(e) => Delivered {
            ok: false,
            text: String::new(),
            item: task.item.clone(),
            exhausted: e.value_kind() == Some(ErrorValueKind::RoundCap),
            error: Some(error_value(e)),
            running: false,
        },
    }
}

/// Whether a failed arm's error is hard (it cancels the siblings and raises at `tasks.fanout`)
/// rather than soft exhaustion.
pub fn is_hard(end: &TaskEnd) -> bool {
    match &end.outcome {
        Ok(_) => false,
        Err(e) => e.value_kind() != Some(ErrorValueKind::RoundCap),
    }
}

/// `tasks.fanout` over a worker section: one arm per member (its item; `sys.index` is its
/// 1-based position), at most the concurrency limit running at once, every arm joined, results in
/// collection order. A hard error in an arm cancels the arms still running (and starts no more)
/// and comes back as the error; soft exhaustion is only reported in that arm's result.
pub async fn fanout(ctx: &EntryCtx, worker: Worker, members: Vec<Json>) -> Result<Vec<Rc<Task>>, RunError> {
    let (section, code) = match worker {
        Worker::Section(i) => (i, None),
        Worker::Function { section, code } => (section, Some(code)),
    };
    let limit = usize::try_from(ctx.run.limits.fanout_concurrency).unwrap_or(usize::MAX).max(1);
    let mut started: Vec<Rc<Task>> = Vec::with_capacity(members.len());
    let mut running: Vec<Rc<Task>> = Vec::new();
    let mut members = members.into_iter().enumerate();
    loop {
        while running.len() < limit {
            let Some((i, item)) = members.next() else { break };
            let start = ChainStart { input: None, item: Some(item), index: Some(i + 1), worker: code.clone() };
            let task = spawn(ctx, section, start, Starter::Arm).map_err(|m| RunError::new(RunErrorKind::Lua, m))?;
            started.push(task.clone());
            running.push(task);
        }
        if running.is_empty() {
            break;
        }
        let done = running.remove(first_finished(&running).await);
        let hard = done.end().filter(|end| is_hard(end)).and_then(|end| end.outcome.clone().err());
        if let Some(error) = hard {
            for sibling in &running {
                cancel(&ctx.run, sibling);
            }
            let arm = started.iter().position(|t| Rc::ptr_eq(t, &done)).map_or(0, |i| i + 1);
            return Err(arm_failure(error, arm, done.item.as_ref()));
        }
    }
    for task in &started {
        join(&ctx.chain.identity, task);
    }
    Ok(started)
}
