//! The `models` global's Rust side (docs/language.md, "Models"): `models.use` and
//! `models.default`, model handles (`models.get`), and the one-round `models.infer`, over
//! `effects::models`. `models.loop` is `loop_api`.

use mlua::{Lua, Value};

use super::env::{fail, ok, ok_text, Answer, Args, Env};
use super::values::convert;
use super::values::userdata::Handle;
use crate::effects::context::EntryCtx;
use crate::effects::models;
use crate::error::ErrorValueKind;

/// Where the VM keeps the Lua function every model handle's `infer` field answers.
pub const MODEL_INFER: &str = "runvil.model_infer";

/// `models.use(role)` and (`default`) `models.default(role)`.
pub fn select_role(lua: &Lua, env: &Env, role: &Value, default: bool) -> Answer {
    let Value::String(s) = role else {
        let call = if default { "models.default" } else { "models.use" };
        return fail(lua, ErrorValueKind::Lua, format!("{call} takes a role label, got {}", role.type_name()));
    };
    match models::select_role(&env.ctx, s.to_string_lossy(), default) {
        Ok(()) => ok(lua, ()),
        Err(msg) => fail(lua, ErrorValueKind::Lua, msg),
    }
}

/// `models.get(role)`: a frozen handle on a declared role. `infer` is the Lua function every
/// model handle's `infer` field answers (the `models` part's), kept with the VM's first handle.
pub fn model_handle(lua: &Lua, env: &Env, role: &Value, infer: &Value) -> Answer {
    match role {
        Value::String(s) => {
            let label = s.to_string_lossy();
            match models::role_ref(&env.ctx, &label) {
                Some(r) => {
                    if let (Value::Function(f), Value::Nil) = (infer, lua.named_registry_value::<Value>(MODEL_INFER)?) {
                        lua.set_named_registry_value(MODEL_INFER, f)?;
                    }
                    ok(lua, lua.create_userdata(Handle::Model(r))?)
                }
                None => fail(lua, ErrorValueKind::Lua, format!("models.get: no model role {label} is declared under models:")),
            }
        }
        other => fail(lua, ErrorValueKind::Lua, format!("models.get takes a role label, got {}", convert::lua_type(other))),
    }
}

/// `models.infer(prompt)`: one round, no tools, a fresh conversation.
pub async fn infer(lua: &Lua, ctx: &EntryCtx, args: Args) -> Answer {
    let text = match args.0.front() {
        Some(Value::String(s)) => s.to_string_lossy(),
        other => {
            let t = other.map(|v| v.type_name()).unwrap_or("nil");
            return fail(lua, ErrorValueKind::Lua, format!("models.infer takes a prompt string, got {t}"));
        }
    };
    let role = match args.0.get(1) {
        Some(Value::String(s)) => Some(s.to_string_lossy()),
        _ => None,
    };
    match models::infer(ctx, text, role).await {
        Ok(text) => ok_text(lua, text.as_bytes()),
        Err(msg) => fail(lua, ErrorValueKind::Model, msg),
    }
}
