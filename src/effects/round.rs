//! The `models.loop` protocol (`002`, "The tool loop"): a round asks the model, the reply's tool
//! calls pass the scope gate, catalog calls run concurrently up to the next local call, and the
//! round's records join the conversation. Local tool handlers are Lua functions, so the Lua
//! binding drives the loop and runs them between these steps; everything else is here.

use futures::future::join_all;
use serde_json::Value as Json;
use std::rc::Rc;

use super::context::EntryCtx;
use super::conversation::{Round, ToolList};
use super::memory::Held;
use super::task_builtins::{self, deliver_task_notices};
use super::tool_calls::{call_catalog, Caller};
use super::{models, Refusal};
use crate::effects::events::Event;
use crate::error::ErrorValueKind;
use crate::host::{HostError, Incoming, ModelRequest};
use crate::tools::{parse_tool_calls, Advertised, Record, Target, ToolCall};

/// The tool list of the current round: the loop's, unless the task built-ins came or went.
fn tool_list(ctx: &EntryCtx) -> Rc<ToolList> {
    let with_tasks = ctx.scope().task_allow.is_some();
    if let Some(list) = ctx.conversation.round().tools.as_ref().filter(|l| l.with_tasks == with_tasks) {
        return list.clone();
    }
    let advertised = ctx.scope().advertised();
    let wire = (!advertised.is_empty()).then(|| {
        Rc::new(Json::Array(
            advertised.iter().map(|a| crate::obj!({ "name": a.name, "description": a.description, "parameters": a.parameters })).collect(),
        ))
    });
    let list = Rc::new(ToolList { with_tasks, advertised, wire });
    ctx.conversation.round_mut().tools = Some(list.clone());
    list
}

/// How a model round ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RoundEnd {
    /// The model answered with text: the loop's result.
    Final(String),
    /// The model asked for this many tool calls, now waiting in the round.
    Calls(usize),
}

/// The call at a position of the round: what the binding must run.
#[derive(Debug, Clone, PartialEq)]
pub enum PendingCall {
    /// A local tool: the binding runs its Lua handler, with the call's arguments read in place
    /// ([`call_arguments`]).
    Local { alias: String, call_id: String, turn: u64 },
    /// A catalog tool: [`run_catalog_batch`] runs it with its neighbours.
    Catalog,
}

/// Checks and the render before the first round of a `models.loop` call.
pub fn start(c: &EntryCtx) -> Result<(), Refusal> {
    if c.scope().handler_depth > 0 {
        return Err(Refusal::lua("models.loop cannot run inside a local tool handler; return a value from the handler instead"));
    }
    if c.conversation.messages().is_empty() {
        return Err(Refusal::lua("models.loop needs a message to answer: add one with messages:user(text) first"));
    }
    let role = models::resolve_role(c).map_err(|m| Refusal::new(ErrorValueKind::Model, m))?;
    if !c.run.host.has_model(&role, &models::spec_of(c, &role)) {
        return Err(Refusal::new(ErrorValueKind::Model, format!("no model is bound to the role {role}")));
    }
    if c.scope().rendered.is_none() {
        c.emit(Event::ToolScopeValidationStarted, || crate::obj!({}));
        let count = c.scope_mut().render(&c.run.catalog).len();
        c.emit(Event::ToolScopeValidationSucceeded, || crate::obj!({ "tools": count }));
    }
    *c.conversation.round_mut() = Round::default();
    Ok(())
}

/// One model round: the request, the reply's checks, the scope gate.
pub async fn ask_model(ctx: &EntryCtx) -> Result<RoundEnd, Refusal> {
    let cap = ctx.run.limits.max_tool_iterations;
    if ctx.conversation.round().rounds >= cap {
        return Err(Refusal::new(
            ErrorValueKind::RoundCap,
            format!("models.loop reached its round cap of {cap} rounds without a final reply"),
        ));
    }
    let model_error = |m: String| Refusal::new(ErrorValueKind::Model, m);
    let role = models::resolve_role(ctx).map_err(model_error)?;
    let spec = models::spec_of(ctx, &role);
    let turn = {
        let mut s = ctx.scope_mut();
        s.turn += 1;
        s.turn
    };
    ctx.conversation.round_mut().rounds += 1;
    deliver_task_notices(ctx).map_err(Refusal::lua)?;
    let tools = tool_list(ctx);
    let advertised = &tools.advertised;
    let name = ctx.section_name().to_string();
    ctx.emit(Event::ModelTurnStarted, || crate::obj!({ "turn": turn, "role": role }));
    // The host gets the whole conversation by reference and ships what it needs; the borrow
    // ends before the await (the call is made synchronously, the future owns its data).
    let call = {
        let messages = ctx.conversation.messages();
        ctx.run.host.call_model_round(ModelRequest {
            role: &role,
            spec: &spec,
            section: &name,
            chain: ctx.chain.id(),
            entry: ctx.id,
            turn,
            conversation: ctx.conversation.id(),
            messages: &messages,
            tools: tools.wire.as_ref(),
        })
    };
    let mut reply = call.await.map_err(|e| match e {
        HostError::Failed(message) => model_error(message),
        HostError::TooLarge(bytes) => Refusal::lua(ctx.refuse_incoming(Incoming::ModelReply, bytes)),
    })?;
    ctx.emit(Event::ModelTurnCompleted, || crate::obj!({ "turn": turn }));
    let model_id = reply.get("model").and_then(Json::as_str).or_else(|| spec.get("model").and_then(Json::as_str)).unwrap_or(&role);
    let finish = reply.get("finish_reason").and_then(Json::as_str).unwrap_or("stop");
    ctx.conversation.set_model_facts(model_id.to_string(), finish.to_string());
    let calls = parse_tool_calls(&mut reply).map_err(model_error)?;
    let content = match reply.get_mut("content") {
        Some(Json::String(s)) => std::mem::take(s),
        Some(Json::Null) | None => String::new(),
        Some(_) => return Err(model_error("the model's reply is malformed: content must be a string".into())),
    };
    let reasoning = reply.get("reasoning_content").and_then(Json::as_str).filter(|s| !s.is_empty()).map(str::to_string);
    let stop = reply.get("finish_reason").and_then(Json::as_str) == Some("stop");
    // The reply's copy goes before the records take theirs.
    drop(reply);
    if calls.is_empty() {
        if content.is_empty() && !(stop && ctx.conversation.round().had_calls) {
            return Err(model_error("the model returned an empty reply".into()));
        }
        ctx.push_record(Record { reasoning, ..Record::text("assistant", content.clone()) }).map_err(Refusal::lua)?;
        return Ok(RoundEnd::Final(content));
    }
    // The scope gate: every name must be one this round advertised.
    let mut targets = Vec::new();
    for call in &calls {
        match advertised.iter().find(|a| a.name == call.name) {
            Some(a) => targets.push(a.target.clone()),
            None => {
                emit_batch(ctx, turn, &calls, advertised);
                ctx.emit(Event::ToolCallFailed, || crate::obj!({ "alias": call.name, "tool_call_id": call.id, "turn": turn }));
                let names: Vec<&str> = advertised.iter().map(|a| a.name.as_str()).collect();
                let hint = if ctx.run.catalog.by_wire(&call.name).is_some() {
                    " (a catalog tool that was not offered in this section)"
                } else {
                    ""
                };
                let message = format!("tool {:?} is not in this section's scope; in-scope aliases: {names:?}{hint}", call.name);
                return Err(Refusal::new(ErrorValueKind::OutOfScopeTool, message).naming(&call.name));
            }
        }
    }
    emit_batch(ctx, turn, &calls, advertised);
    let resolved: Vec<(ToolCall, Target)> = calls.into_iter().zip(targets).collect();
    let n = resolved.len();
    // A local tool's handler never sees arguments that do not fit its parameters: the call is
    // answered with why, in its turn (run_catalog_batch), and the model may retry. (Catalog
    // tools are checked where they run, for scripts too: effects::tool_calls.)
    let results = resolved
        .iter()
        .map(|(call, target)| {
            let Target::Local(alias) = target else { return None };
            let parameters = &advertised.iter().find(|a| &a.name == alias)?.parameters;
            let why = crate::tools::schema::check(parameters, &call.arguments, crate::tools::schema::Required::Enforced).err()?;
            Some(crate::untrusted::envelope(&format!("invalid arguments for {alias}: {why}"), &ctx.run.nonce))
        })
        .collect();
    let mut r = ctx.conversation.round_mut();
    r.had_calls = true;
    r.content = content;
    r.reasoning = reasoning;
    r.results = results;
    r.calls = resolved;
    Ok(RoundEnd::Calls(n))
}

/// The call at `index` (0-based) of the round in progress, if there is one.
pub fn pending_call(c: &EntryCtx, index: usize) -> Option<PendingCall> {
    let r = c.conversation.round();
    let (call, target) = r.calls.get(index)?;
    let refused = r.results.get(index).is_some_and(Option::is_some);
    Some(match target {
        // A refused local call is answered by the engine, as catalog calls are.
        Target::Local(_) if refused => PendingCall::Catalog,
        Target::Local(alias) => PendingCall::Local { alias: alias.clone(), call_id: call.id.clone(), turn: c.scope().turn },
        Target::Catalog(_) | Target::Task(_) => PendingCall::Catalog,
    })
}

/// `read` applied to the arguments of the call at `index` (0-based), where the round holds them:
/// they may be most of a large reply, and the handler's table is built from them without a copy.
/// `read` must not reach the round again (it is borrowed meanwhile).
pub fn call_arguments<R>(c: &EntryCtx, index: usize, read: impl FnOnce(&Json) -> R) -> Option<R> {
    let r = c.conversation.round();
    r.calls.get(index).map(|(call, _)| read(&call.arguments))
}

/// Records the text a local handler answered for the call at `index` (0-based).
pub fn set_result(c: &EntryCtx, index: usize, text: String) {
    if let Some(slot) = c.conversation.round_mut().results.get_mut(index) {
        *slot = Some(text);
    }
}

/// Runs the catalog calls of the round from `index` (0-based) up to the next local call,
/// concurrently; answers the index of the next call.
pub async fn run_catalog_batch(ctx: &EntryCtx, index: usize) -> Result<usize, Refusal> {
    let turn = ctx.scope().turn;
    // A local call whose arguments were refused at the gate: its answer is ready.
    let refused = {
        let r = ctx.conversation.round();
        match (r.calls.get(index), r.results.get(index)) {
            (Some((call, Target::Local(alias))), Some(Some(text))) => Some((call.id.clone(), alias.clone(), text.clone())),
            _ => None,
        }
    };
    if let Some((call_id, alias, text)) = refused {
        ctx.emit(Event::ToolCallFailed, || crate::obj!({ "alias": alias, "tool_call_id": call_id, "turn": turn }));
        ctx.emit(
            Event::ToolResult,
            || crate::obj!({ "turn": turn, "tool_call_id": call_id, "alias": alias, "content": text, "trusted": false }),
        );
        return Ok(index + 1);
    }
    // A task built-in runs alone, in its place.
    let builtin = ctx.conversation.round().calls.get(index).and_then(|(call, t)| match t {
        Target::Task(b) => Some((*b, call.arguments.clone())),
        _ => None,
    });
    if let Some((builtin, arguments)) = builtin {
        let text = task_builtins::run(ctx, builtin, &arguments).await;
        if let Some(stop) = ctx.run.stop.borrow().clone() {
            return Err(Refusal::new(ErrorValueKind::Cancelled, stop.message));
        }
        ctx.conversation.round_mut().results[index] = Some(text);
        return Ok(index + 1);
    }
    let batch: Vec<(usize, ToolCall, usize)> = {
        let r = ctx.conversation.round();
        r.calls
            .iter()
            .enumerate()
            .skip(index)
            .map_while(|(k, (call, t))| match t {
                Target::Catalog(idx) => Some((k, call.clone(), *idx)),
                Target::Local(_) | Target::Task(_) => None,
            })
            .collect()
    };
    let next = index + batch.len();
    let runs =
        batch.iter().map(|(_, call, idx)| call_catalog(ctx, *idx, &call.name, call.arguments.clone(), &call.id, turn, Caller::Model));
    let outcomes = join_all(runs).await;
    if let Some(stop) = ctx.run.stop.borrow().clone() {
        return Err(Refusal::new(ErrorValueKind::Cancelled, stop.message));
    }
    let mut r = ctx.conversation.round_mut();
    for ((k, _, _), outcome) in batch.iter().zip(outcomes) {
        // A bound tool's failure goes back to the model as untrusted text.
        let text = match outcome {
            Ok((text, _)) => text,
            Err(msg) => crate::untrusted::envelope(&msg, &ctx.run.nonce),
        };
        r.results[*k] = Some(text);
    }
    Ok(next)
}

/// Arguments of this many bytes handed to local handlers are collected as soon as the round ends.
const COLLECT_AFTER_BYTES: usize = 1 << 20;

/// Appends the round's records: one assistant record with every call, one tool record each.
pub fn finish(c: &EntryCtx) -> Result<(), Refusal> {
    let r = std::mem::take(&mut *c.conversation.round_mut());
    // The calls move into the record (their arguments may be large); the ids are kept for the
    // tool records.
    let ids: Vec<String> = r.calls.iter().map(|(call, _)| call.id.clone()).collect();
    let handled = r.calls.iter().any(|(_, target)| matches!(target, Target::Local(_)));
    let assistant = Record {
        role: "assistant".into(),
        content: r.content,
        tool_calls: r.calls.into_iter().map(|(call, _)| call).collect(),
        tool_call_id: None,
        reasoning: r.reasoning,
    };
    *c.conversation.round_mut() = Round { had_calls: true, rounds: r.rounds, tools: r.tools.clone(), ..Round::default() };
    let held = c.chain.memory.held_by(Held::Messages);
    c.push_record(assistant).map_err(Refusal::lua)?;
    // A local handler got its arguments as a Lua table: garbage once it returned, but Lua's
    // incremental collector frees it only after more allocation, and the next request's text
    // would be written beside it. Large arguments are collected now (the collection costs far
    // less than building their table did).
    if handled && c.chain.memory.held_by(Held::Messages) - held >= COLLECT_AFTER_BYTES {
        c.chain.memory.collect();
    }
    for (id, text) in ids.into_iter().zip(r.results) {
        let tool = Record { tool_call_id: Some(id), ..Record::text("tool", text.unwrap_or_default()) };
        c.push_record(tool).map_err(Refusal::lua)?;
    }
    Ok(())
}

/// A local handler raised out of the loop: the round is dropped.
pub fn abort(c: &EntryCtx) {
    *c.conversation.round_mut() = Round::default();
}

fn emit_batch(c: &EntryCtx, turn: u64, calls: &[ToolCall], advertised: &[Advertised]) {
    // The event carries a copy of every call's arguments: made only for an observer.
    if !c.run.host.observed() {
        return;
    }
    let list: Vec<Json> = calls
        .iter()
        .map(|call| {
            let mut o = crate::obj!({ "id": call.id, "name": call.name, "arguments": call.arguments });
            if let Some(Advertised { target: Target::Catalog(idx), .. }) = advertised.iter().find(|a| a.name == call.name) {
                o["tool"] = Json::from(c.run.catalog.tools[*idx].id.clone());
            }
            o
        })
        .collect();
    c.emit(Event::AssistantToolCalls, || crate::obj!({ "turn": turn, "calls": list }));
}
