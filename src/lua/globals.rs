//! The Rust side of the Engine globals: the functions bootstrap.lua receives as `E`.
//! Each answers in the check convention (`true, ...` or `false, kind, message`), so the error
//! values Lua sees are built in one place (bootstrap.lua).

use mlua::{IntoLuaMulti, Lua, MultiValue, Table, Value};
use serde_json::{json, Value as Json};
use std::cell::OnceCell;
use std::rc::Rc;

use super::values::{self, fail, ok, Answer, Marks, ProxyShims};
use crate::engine::context::EntryCtx;
use crate::engine::{models, time};
use crate::subst::{self, Global, Resolver};

/// The message Lua raises when an allocation fails (the preallocated LUA_ERRMEM string).
const LUA_MEMORY_ERROR: &str = "not enough memory";
pub const LOG_MAX_CHARS: usize = 4096;

/// What every Engine function of one VM works with.
pub struct Env {
    pub ctx: Rc<EntryCtx>,
    pub marks: Marks,
    pub shims: Rc<OnceCell<ProxyShims>>,
}

fn arg(args: &MultiValue, i: usize) -> Value {
    args.get(i).cloned().unwrap_or(Value::Nil)
}

fn table_arg(args: &MultiValue, i: usize) -> mlua::Result<Table> {
    match arg(args, i) {
        Value::Table(t) => Ok(t),
        other => Err(mlua::Error::runtime(format!("expected a table, got {}", other.type_name()))),
    }
}

/// The Engine functions of this module, by the name bootstrap.lua uses (`E.name`). `None` when
/// the name is not one of them.
pub fn call(lua: &Lua, env: &Env, name: &str, args: &MultiValue) -> Option<Answer> {
    let (c, m) = (&env.ctx, &env.marks);
    Some(match name {
        "is_control" => {
            if let Value::String(s) = arg(args, 0) {
                if s.as_bytes().as_ref() == LUA_MEMORY_ERROR.as_bytes() {
                    c.run.stop_with(super::memory_limit_error(c).in_section(&c.heading()));
                }
            }
            c.run.stopped().into_lua_multi(lua)
        }
        "prose" => read_prose(lua, c, m),
        "argv_initial" => match &*c.chain.argv.borrow() {
            Some(j) => values::to_lua(lua, j, m).and_then(|v| v.into_lua_multi(lua)),
            None => Ok(MultiValue::new()),
        },
        "argv_frozen" => argv_frozen(lua, env),
        "sys_get" => {
            let name = key_text(&arg(args, 0));
            match sys_field(c, &name) {
                Some(j) => values::to_lua(lua, &j, m).and_then(|v| ok(lua, v)),
                None => fail(lua, "lua", format!("unknown sys field '{name}'")),
            }
        }
        "ui_get" => match key_text(&arg(args, 0)).as_str() {
            "kind" => ok(lua, c.run.ui.kind.as_str()),
            "interactive" => ok(lua, c.run.ui.interactive),
            other => fail(lua, "lua", format!("unknown ui field '{other}'")),
        },
        "prompt_get" => prompt_field(lua, c, m, &key_text(&arg(args, 0))),
        "prompt_list" => prompt_list(lua, c, m, &arg(args, 0)),
        "var_index" => shims_of(&env.shims).and_then(|sh| values::proxy_index(lua, sh, &table_arg(args, 0)?, &arg(args, 1))),
        "var_newindex" => values::proxy_newindex(lua, m, &table_arg(args, 0).ok()?, &arg(args, 1), &arg(args, 2)),
        "var_len" => values::proxy_len(lua, &table_arg(args, 0).ok()?),
        "var_pairs" => shims_of(&env.shims).and_then(|sh| values::proxy_pairs(lua, sh, &table_arg(args, 0)?)),
        "json_array" => lua.create_sequence_from(args.iter().cloned()).and_then(|t| {
            t.set_metatable(Some(m.array_mt.clone()))?;
            t.into_lua_multi(lua)
        }),
        "json_encode" => match values::to_json(&arg(args, 0), m) {
            Ok(j) => ok(lua, j.to_string()),
            Err(e) => fail(lua, "lua", format!("json.encode: {}", e.describe())),
        },
        "json_decode" => json_decode(lua, m, &arg(args, 0)),
        "log" => log(lua, c, &arg(args, 0)),
        "untrusted" => untrusted(lua, c, &arg(args, 0)),
        "preludes" => preludes(lua, c),
        "load_prelude" => {
            let (source, id, env) = (arg(args, 0), key_text(&arg(args, 1)), table_arg(args, 2).ok()?);
            let Value::String(source) = source else { return Some(fail(lua, "lua", "a prelude must be Lua source text")) };
            match lua
                .load(source.as_bytes().to_vec())
                .set_name(format!("=pack:{id}"))
                .set_environment(env)
                .set_mode(mlua::chunk::ChunkMode::Text)
                .into_function()
            {
                Ok(f) => ok(lua, f),
                Err(mlua::Error::SyntaxError { message, .. }) => fail(lua, "lua", message),
                Err(e) => fail(lua, "lua", e.to_string()),
            }
        }
        "prelude_var" => {
            let handle = values::JsonHandle { root: c.chain.var.clone(), path: Vec::new(), access: values::Access::PreludeVar };
            shims_of(&env.shims).and_then(|sh| values::make_proxy(lua, sh, handle)).and_then(|t| ok(lua, t))
        }
        "prelude_loading" => {
            c.loading_prelude.set(matches!(arg(args, 0), Value::Boolean(true)));
            Ok(MultiValue::new())
        }
        "models_use" | "models_default" => match models::select_role(c, &arg(args, 0), name == "models_default") {
            Ok(()) => ok(lua, ()),
            Err(msg) => fail(lua, "lua", msg),
        },
        _ => return None,
    })
}

/// The preludes of the declared Packs, in `uses:` order: a list of `{ id, source }`.
fn preludes(lua: &Lua, c: &EntryCtx) -> Answer {
    let list = lua.create_table()?;
    for entry in &c.run.prompt.front.uses {
        let id = crate::ids::pack_id(entry);
        let Some(p) = c.run.catalog.pack(id) else { continue };
        let Some(h) = c.run.catalog.packs[p].host else { continue };
        if let Some(source) = &c.run.host_packs[h].prelude {
            list.raw_set(list.raw_len() + 1, lua.create_sequence_from([id, source.as_str()])?)?;
        }
    }
    ok(lua, list)
}

fn argv_frozen(lua: &Lua, env: &Env) -> Answer {
    let argv = env.ctx.chain.argv.borrow().clone();
    match argv {
        None | Some(Json::Null) => ok(lua, Value::Nil),
        Some(j @ (Json::Object(_) | Json::Array(_))) => {
            let handle =
                values::JsonHandle { root: Rc::new(std::cell::RefCell::new(j)), path: Vec::new(), access: values::Access::FrozenArgv };
            ok(lua, values::make_proxy(lua, shims_of(&env.shims)?, handle)?)
        }
        Some(scalar) => ok(lua, values::to_lua(lua, &scalar, &env.marks)?),
    }
}

fn json_decode(lua: &Lua, m: &Marks, v: &Value) -> Answer {
    let Value::String(s) = v else {
        return fail(lua, "lua", format!("json.decode takes a string, got {}", v.type_name()));
    };
    match serde_json::from_slice::<Json>(&s.as_bytes()) {
        Ok(j) => ok(lua, values::to_lua(lua, &j, m)?),
        Err(e) => fail(lua, "lua", format!("json.decode: invalid JSON: {e}")),
    }
}

fn untrusted(lua: &Lua, c: &EntryCtx, v: &Value) -> Answer {
    let text = match v {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(_) | Value::Number(_) => match lua.coerce_string(v.clone())? {
            Some(s) => s.to_string_lossy(),
            None => String::new(),
        },
        other => return fail(lua, "lua", format!("untrusted takes a string, got {}", other.type_name())),
    };
    ok(lua, super::untrusted::envelope(&text, &c.run.nonce))
}

/// `models.infer(prompt)`: one round, no tools, a fresh conversation.
pub async fn infer(lua: &Lua, ctx: &EntryCtx, args: MultiValue) -> Answer {
    let text = match args.front() {
        Some(Value::String(s)) => s.to_string_lossy(),
        other => {
            let t = other.map(|v| v.type_name()).unwrap_or("nil");
            return fail(lua, "lua", format!("models.infer takes a prompt string, got {t}"));
        }
    };
    let role = match args.get(1) {
        Some(Value::String(s)) => Some(s.to_string_lossy()),
        _ => None,
    };
    match models::infer(ctx, text, role).await {
        Ok(text) => ok(lua, text),
        Err(msg) => fail(lua, "model", msg),
    }
}

fn shims_of(cell: &OnceCell<ProxyShims>) -> mlua::Result<&ProxyShims> {
    cell.get().ok_or_else(|| mlua::Error::runtime("var proxies are not ready before the bootstrap ran"))
}

fn key_text(key: &Value) -> String {
    match key {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(i) => i.to_string(),
        Value::Number(_) => "number".to_string(),
        other => other.type_name().to_string(),
    }
}

/// The fields of `sys` (`DECISIONS.md`, "Observation, cancellation, facts"). Fields that
/// appear later (`model`, `reply_finish_reason`, `index`) are absent until their feature sets
/// them, and reading an absent field raises.
pub fn sys_field(ctx: &EntryCtx, name: &str) -> Option<Json> {
    Some(match name {
        "id" => Json::from(ctx.id),
        "when" => Json::from(ctx.run.started.clone()),
        "now" => json!(time::rfc3339(ctx.run.host.now_ms())),
        "execution" => Json::from(ctx.run.execution.clone()),
        "section_name" => Json::from(ctx.section_name()),
        "section_count" => Json::from(ctx.run.prompt.sections.len()),
        // Present once the entry's first model round has answered (models.infer never sets them).
        "model" | "reply_finish_reason" => {
            let facts = ctx.model_facts.borrow();
            let (model, finish) = facts.as_ref()?;
            Json::from(if name == "model" { model.as_str() } else { finish.as_str() })
        }
        _ => return None,
    })
}

fn prompt_field(lua: &Lua, ctx: &EntryCtx, marks: &Marks, name: &str) -> Answer {
    let p = &ctx.run.prompt;
    match name {
        "name" => ok(lua, p.front.name.clone()),
        "description" => ok(lua, p.front.description.clone()),
        "sections" => {
            let headings: Vec<Json> = p.sections.iter().map(|s| Json::from(s.heading.clone())).collect();
            ok(lua, values::to_lua(lua, &Json::Array(headings), marks)?)
        }
        other => fail(lua, "lua", format!("unknown prompt field '{other}'")),
    }
}

fn prompt_list(lua: &Lua, ctx: &EntryCtx, marks: &Marks, heading: &Value) -> Answer {
    let Value::String(h) = heading else {
        return fail(lua, "lua", format!("prompt.list takes a section heading, got {}", heading.type_name()));
    };
    let p = &ctx.run.prompt;
    match p.resolve(ctx.section, &h.to_string_lossy()) {
        Err(msg) => fail(lua, "lua", format!("prompt.list: {msg}")),
        Ok(i) => match &p.sections[i].list {
            Some(items) => ok(lua, values::to_lua(lua, &Json::from(items.clone()), marks)?),
            None => fail(lua, "lua", format!("prompt.list: section {:?} holds no Markdown list", p.sections[i].heading)),
        },
    }
}

fn log(lua: &Lua, ctx: &EntryCtx, message: &Value) -> Answer {
    let Value::String(s) = message else {
        return fail(lua, "lua", format!("log takes a message string, got {}", message.type_name()));
    };
    let Ok(text) = s.to_str() else {
        return fail(lua, "lua", "log message is not valid UTF-8");
    };
    let text = text.to_string();
    if text.chars().count() > LOG_MAX_CHARS {
        return fail(lua, "lua", format!("log message is longer than {LOG_MAX_CHARS} characters"));
    }
    if let Some(c) = text.chars().find(|&c| c.is_control() && c != '\n') {
        return fail(lua, "lua", format!("log message contains the control character U+{:04X}", c as u32));
    }
    ctx.run.emit("log", Some(ctx.section_name()), crate::obj!({ "id": ctx.id, "message": text }));
    ok(lua, ())
}

/// The first read of `prose` in a block renders it; later reads return the same string.
fn read_prose(lua: &Lua, ctx: &EntryCtx, marks: &Marks) -> Answer {
    if let Some(text) = &ctx.prose.borrow().rendered {
        return ok(lua, text.as_str());
    }
    let raw = ctx.prose.borrow().raw.clone();
    let argv = ctx.chain.argv.borrow().clone();
    let mut resolver = LuaResolver { lua, ctx, marks, argv };
    match subst::render(&raw, &mut resolver) {
        Ok(text) => {
            ctx.prose.borrow_mut().rendered = Some(text.clone());
            ok(lua, text)
        }
        Err(e) => fail(lua, "lua", e.to_string()),
    }
}

/// Substitution's view of a running section: `var`, `sys`, the chain's arguments, the seeded
/// item, and the section's globals read through `_G` (and so through its metatable).
struct LuaResolver<'a> {
    lua: &'a Lua,
    ctx: &'a EntryCtx,
    marks: &'a Marks,
    argv: Option<Json>,
}

impl Resolver for LuaResolver<'_> {
    fn args(&self) -> &str {
        &self.ctx.chain.args
    }
    fn argv(&self) -> Option<&Json> {
        self.argv.as_ref()
    }
    fn item(&self) -> Option<&Json> {
        self.ctx.item.as_ref()
    }
    fn var_field(&self, key: &str) -> Option<Json> {
        self.ctx.chain.var.borrow().get(key).cloned()
    }
    fn sys_field(&self, key: &str) -> Option<Json> {
        sys_field(self.ctx, key)
    }
    fn global(&mut self, name: &str) -> Global {
        match self.lua.globals().get::<Value>(name) {
            Ok(Value::Nil) => Global::Nil,
            Ok(v) => match values::to_json(&v, self.marks) {
                Ok(j) => Global::Data(j),
                Err(_) => Global::NotData,
            },
            Err(_) => Global::NotData,
        }
    }
}
