//! The model's task built-ins (`002`, "Giving the model task tools"; `004`, "Task notices"):
//! `task`, `task_cancel`, `task_status` and `await_tasks`, offered after `tools.allow_tasks`. They
//! act on tasks the section's model started; each answers the model with text (a refusal is the
//! call's result, never a raised error). A finished task reaches the model once, either through
//! `await_tasks` or as a task notice before the next round; that delivery joins it.

use serde_json::Value as Json;
use std::rc::Rc;

use super::chains::{self, ChainStart};
use super::context::EntryCtx;
use super::tasks::{Starter, Status, Task};
use crate::tools::{Record, TaskAllow, TaskBuiltin};

/// Runs one built-in call and answers its tool result.
pub async fn run(ctx: &EntryCtx, builtin: TaskBuiltin, arguments: &Json) -> String {
    let text = |k: &str| arguments.get(k).and_then(Json::as_str).map(str::to_string);
    match builtin {
        TaskBuiltin::Task => start(ctx, text("target").unwrap_or_default(), text("input")),
        TaskBuiltin::Cancel => {
            let id = text("id").unwrap_or_default();
            match model_task(ctx, &id) {
                None => format!("task_cancel: no task {id} was started here"),
                Some(t) if chains::cancel(&ctx.run, &t) => format!("cancelled task {id}"),
                Some(t) => format!("task {id} had already ended ({})", t.status().as_str()),
            }
        }
        TaskBuiltin::Status => {
            let list: Vec<Json> = model_tasks(ctx)
                .iter()
                .filter(|t| text("id").is_none_or(|id| id == t.id))
                .map(|t| crate::obj!({ "id": t.id, "target": chains::target(&ctx.run, t), "status": t.status().as_str() }))
                .collect();
            Json::Array(list).to_string()
        }
        TaskBuiltin::Await => await_tasks(ctx, arguments).await,
    }
}

/// The tasks the section's model started (in start order).
fn model_tasks(ctx: &EntryCtx) -> Vec<Rc<Task>> {
    ctx.chain.tasks.borrow().iter().filter(|t| t.starter == Starter::Model).cloned().collect()
}

fn model_task(ctx: &EntryCtx, id: &str) -> Option<Rc<Task>> {
    model_tasks(ctx).into_iter().find(|t| t.id == id.trim())
}

fn start(ctx: &EntryCtx, target: String, input: Option<String>) -> String {
    let allow = ctx.scope().task_allow.clone();
    if let Some(TaskAllow::Only(list)) = &allow {
        if !list.iter().any(|t| t == target.trim()) {
            let targets: Vec<String> = list.iter().map(|t| format!("`{t}`")).collect();
            return format!("task: target `{}` is not allowed; allowed targets: {}", target.trim(), targets.join(", "));
        }
    }
    let section = match ctx.run.prompt.resolve(ctx.section, &target) {
        Ok(i) => i,
        Err(m) => return format!("task: {m}"),
    };
    match chains::spawn(ctx, section, ChainStart { input, item: None, index: None, worker: None }, Starter::Model) {
        Ok(task) => format!("started task {} at {}", task.id, chains::target(&ctx.run, &task)),
        Err(m) => format!("task: {m}"),
    }
}

/// What a delivered task tells the model: its status and its result (or error) in the untrusted
/// envelope.
fn notice(ctx: &EntryCtx, task: &Task) -> String {
    let d = chains::delivered(task);
    let body = if d.ok { d.text } else { d.error.as_ref().and_then(|e| e.get("message")).and_then(Json::as_str).unwrap_or("").to_string() };
    let verb = match task.status() {
        Status::Done => "finished",
        Status::Failed => "failed",
        Status::Cancelled => "was cancelled",
        Status::Running => "is running",
    };
    format!("task {} {verb}:\n{}", task.id, crate::untrusted::envelope(&body, &ctx.run.nonce))
}

async fn await_tasks(ctx: &EntryCtx, arguments: &Json) -> String {
    let wanted: Option<Vec<String>> =
        arguments.get("ids").and_then(Json::as_array).map(|ids| ids.iter().filter_map(Json::as_str).map(str::to_string).collect());
    let tasks: Vec<Rc<Task>> = model_tasks(ctx)
        .into_iter()
        .filter(|t| match &wanted {
            Some(ids) => ids.iter().any(|id| id.trim() == t.id),
            None => !t.joined.get(),
        })
        .collect();
    if tasks.is_empty() {
        return "await_tasks: no task to wait for".into();
    }
    let all = async {
        for t in &tasks {
            t.finished().await;
        }
    };
    match arguments.get("timeout_ms").and_then(Json::as_f64).filter(|ms| *ms >= 0.0) {
        None => all.await,
        Some(ms) => {
            futures::pin_mut!(all);
            let _ = futures::future::select(all, ctx.run.host.sleep(ms)).await;
        }
    }
    let mut parts = Vec::new();
    for t in &tasks {
        if t.is_finished() {
            chains::join(&ctx.chain.identity, t);
        }
        parts.push(notice(ctx, t));
    }
    parts.join("\n\n")
}

/// Before a round: every task the model started that has ended and was not delivered yet
/// reaches the conversation as a user record, and is joined.
pub fn deliver_task_notices(ctx: &EntryCtx) -> Result<(), String> {
    for task in model_tasks(ctx) {
        if task.is_finished() && !task.joined.get() {
            chains::join(&ctx.chain.identity, &task);
            ctx.push_record(Record::text("user", notice(ctx, &task)))?;
        }
    }
    Ok(())
}
