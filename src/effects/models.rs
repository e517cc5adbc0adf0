//! Model roles and the one-round `models.infer` (docs/language.md, "Models").
//! `models.loop` (`round.rs`) shares [`resolve_role`] and [`spec_of`].

use serde_json::{json, Value as Json};

use super::context::EntryCtx;
use super::events::Event;
use crate::host::Incoming;

/// The role a prompt without `models:` runs its model rounds on.
pub const DEFAULT_ROLE: &str = "default";

fn declared(ctx: &EntryCtx) -> Vec<String> {
    ctx.run.prompt.front.models.keys().cloned().collect()
}

/// `models.use(role)` (any entry) and `models.default(role)` (H1 body only).
pub fn select_role(ctx: &EntryCtx, role: String, default: bool) -> Result<(), String> {
    let call = if default { "models.default" } else { "models.use" };
    let roles = declared(ctx);
    let known = if roles.is_empty() { role == DEFAULT_ROLE } else { roles.contains(&role) };
    if !known {
        let shown: Vec<String> = if roles.is_empty() { vec![DEFAULT_ROLE.into()] } else { roles };
        return Err(format!("{call}: no model role {role:?} is declared under models:; declared roles: {shown:?}"));
    }
    if default {
        if !ctx.is_h1() {
            return Err("models.default belongs in the H1 body; a section selects its role with models.use(role)".into());
        }
        *ctx.run.default_role.borrow_mut() = Some(role);
    } else {
        // One model per section entry: the conversation is bound to it from the first round on.
        if ctx.scope().turn > 0 {
            return Err("models.use: the section's model is fixed at its first model round; use another section for another model".into());
        }
        ctx.conversation.set_role(role);
    }
    Ok(())
}

/// A role a model handle names: a declared role by its position under `models:`, or the
/// implicit `default` of a prompt that declares none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoleRef {
    Declared(usize),
    Implicit,
}

/// The role `models.get(label)` names, if the prompt has it.
pub fn role_ref(ctx: &EntryCtx, label: &str) -> Option<RoleRef> {
    let models = &ctx.run.prompt.front.models;
    if models.is_empty() {
        return (label == DEFAULT_ROLE).then_some(RoleRef::Implicit);
    }
    models.keys().position(|r| r == label).map(RoleRef::Declared)
}

/// The label of a role a handle names.
pub fn role_label(ctx: &EntryCtx, role: RoleRef) -> String {
    match role {
        RoleRef::Declared(i) => ctx.run.prompt.front.models.keys().nth(i).cloned().unwrap_or_default(),
        RoleRef::Implicit => DEFAULT_ROLE.into(),
    }
}

/// The role this entry's model rounds run on.
pub fn resolve_role(ctx: &EntryCtx) -> Result<String, String> {
    if let Some(r) = ctx.conversation.role().or_else(|| ctx.run.default_role.borrow().clone()) {
        return Ok(r);
    }
    let roles = declared(ctx);
    match roles.len() {
        0 => Ok(DEFAULT_ROLE.into()),
        1 => Ok(roles[0].clone()),
        _ => Err(format!(
            "this section has no model role: the prompt declares {roles:?}; select one with models.use(role), or set a prompt-wide one with models.default(role) in the H1 body"
        )),
    }
}

pub fn spec_of(ctx: &EntryCtx, role: &str) -> Json {
    ctx.run.prompt.front.models.get(role).cloned().unwrap_or_else(|| crate::obj!({}))
}

/// Every declared role must have a model before the run starts: one notice line per missing role.
pub fn unmet_requirements(run: &super::context::RunShared) -> Vec<String> {
    run.prompt
        .front
        .models
        .iter()
        .filter(|(role, spec)| !run.host.has_model(role, spec))
        .map(|(role, _)| format!("- no model for role: {role}"))
        .collect()
}

/// One round, no tools, a fresh conversation holding only `prompt`; returns the reply text.
/// Errors are model-safe messages for an error value of kind `model`.
pub async fn infer(ctx: &EntryCtx, prompt: String, role: Option<String>) -> Result<String, String> {
    let role = match role {
        Some(r) => r,
        None => resolve_role(ctx)?,
    };
    let spec = spec_of(ctx, &role);
    if !ctx.run.host.has_model(&role, &spec) {
        return Err(format!("no model is bound to the role {role}"));
    }
    let section = ctx.section_name().to_string();
    let request = json!({
        "role": role,
        "spec": spec,
        "messages": [{ "role": "user", "content": prompt }],
        "section": section,
        "turn": 1,
        "chain": ctx.chain.id(),
        "entry": ctx.id,
    });
    // A model round like a loop's (002: one model_turn_completed per model round), numbered in
    // its own one-round conversation; the section's round count is not touched.
    ctx.emit(Event::ModelTurnStarted, || crate::obj!({ "turn": 1, "role": role }));
    let reply = ctx.run.host.call_model(&role, &spec, request).await.map_err(|e| ctx.host_failure(Incoming::ModelReply, e))?;
    ctx.emit(Event::ModelTurnCompleted, || crate::obj!({ "turn": 1 }));
    match reply.get("content") {
        // As in a loop round without tool calls: an empty answer is no answer.
        Some(Json::String(text)) if text.is_empty() => Err("the model returned an empty reply".into()),
        Some(Json::String(text)) => Ok(text.clone()),
        Some(Json::Null) | None => Err("the model's reply has no text content".into()),
        Some(_) => Err("the model's reply is malformed: content must be a string".into()),
    }
}
