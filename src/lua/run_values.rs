//! The globals that carry run values: `argv` (the H1 pass's, then the frozen one the sections
//! after it see), `sys` (docs/language.md, "Run facts"), `ui` and `prompt`.

use mlua::{IntoLuaMulti, Lua, MultiValue, Value};
use serde_json::{json, Value as Json};
use std::cell::RefCell;
use std::rc::Rc;

use super::env::{fail, ok, Answer, Env};
use super::values::convert;
use super::values::json_handle::{Access, JsonHandle};
use super::values::proxy::make_proxy;
use crate::effects::context::EntryCtx;
use crate::error::ErrorValueKind;
use crate::time;

/// The H1 pass's argv as it starts: the parsed arguments as plain Lua values.
pub fn argv_initial(lua: &Lua, env: &Env) -> Answer {
    match &*env.ctx.chain.argv.borrow() {
        Some(j) => convert::to_lua(lua, j, &env.marks).and_then(|v| v.into_lua_multi(lua)),
        None => Ok(MultiValue::new()),
    }
}

pub fn argv_frozen(lua: &Lua, env: &Env, shims: &Value) -> Answer {
    let argv = env.ctx.chain.argv.borrow().clone();
    match argv {
        None | Some(Json::Null) => ok(lua, Value::Nil),
        Some(j @ (Json::Object(_) | Json::Array(_))) => {
            let handle = JsonHandle { root: Rc::new(RefCell::new(j)), path: Vec::new(), access: Access::FrozenArgv };
            ok(lua, make_proxy(lua, env.keep_shims(shims)?, handle)?)
        }
        Some(scalar) => ok(lua, convert::to_lua(lua, &scalar, &env.marks)?),
    }
}

pub fn sys_get(lua: &Lua, env: &Env, key: &Value) -> Answer {
    let name = convert::key_text(key);
    match sys_field(&env.ctx, &name) {
        Some(j) => ok(lua, convert::to_lua(lua, &j, &env.marks)?),
        None => fail(lua, ErrorValueKind::Lua, format!("unknown sys field '{name}'")),
    }
}

/// The fields of `sys` (docs/language.md, "Run facts"). Fields that
/// appear later (`model`, `reply_finish_reason`, `index`) are absent until their feature sets
/// them, and reading an absent field raises.
pub fn sys_field(ctx: &EntryCtx, name: &str) -> Option<Json> {
    Some(match name {
        "id" => Json::from(ctx.id),
        "when" => Json::from(ctx.run.started.clone()),
        "now" => json!(time::rfc3339(ctx.run.host.clock_ms(ctx.chain.id()))),
        "execution" => Json::from(ctx.run.execution.clone()),
        "section_name" => Json::from(ctx.section_name()),
        "section_count" => Json::from(ctx.run.prompt.sections.len()),
        "index" => Json::from(ctx.chain.index?),
        // Present once the entry's first model round has answered (models.infer never sets them).
        "model" | "reply_finish_reason" => {
            let (model, finish) = ctx.conversation.model_facts()?;
            Json::from(if name == "model" { model } else { finish })
        }
        _ => return None,
    })
}

pub fn ui_get(lua: &Lua, env: &Env, key: &Value) -> Answer {
    let ui = &env.ctx.run.ui;
    match convert::key_text(key).as_str() {
        "kind" => ok(lua, ui.kind.as_str()),
        "interactive" => ok(lua, ui.interactive),
        other => fail(lua, ErrorValueKind::Lua, format!("unknown ui field '{other}'")),
    }
}

pub fn prompt_get(lua: &Lua, env: &Env, key: &Value) -> Answer {
    let (ctx, marks) = (&env.ctx, &env.marks);
    let p = &ctx.run.prompt;
    match convert::key_text(key).as_str() {
        "name" => ok(lua, p.front.name.clone()),
        "description" => ok(lua, p.front.description.clone()),
        "sections" => {
            let headings: Vec<Json> = p.sections.iter().map(|s| Json::from(s.heading.clone())).collect();
            ok(lua, convert::to_lua(lua, &Json::Array(headings), marks)?)
        }
        other => fail(lua, ErrorValueKind::Lua, format!("unknown prompt field '{other}'")),
    }
}

pub fn prompt_list(lua: &Lua, env: &Env, heading: &Value) -> Answer {
    let (ctx, marks) = (&env.ctx, &env.marks);
    let Value::String(h) = heading else {
        return fail(lua, ErrorValueKind::Lua, format!("prompt.list takes a section heading, got {}", heading.type_name()));
    };
    match ctx.run.prompt.list(ctx.section, &h.to_string_lossy()) {
        Err(msg) => fail(lua, ErrorValueKind::Lua, msg),
        Ok(items) => ok(lua, convert::to_lua(lua, &Json::from(items.clone()), marks)?),
    }
}
