//! The Rust side of the core Engine globals (`args`, `argv`, `prose`, `sys`, `ui`, `prompt`,
//! `var`, `json`, `log`, `untrusted`, Pack preludes, `models.use`/`default`/`infer`). Each answers
//! in the check convention (`true, ...` or `false, kind, message`) unless it says otherwise, so
//! the error values Lua sees are built in one place (bootstrap.lua).

use mlua::{IntoLuaMulti, Lua, MultiValue, Table, Value};
use serde_json::{json, Value as Json};
use std::cell::OnceCell;
use std::rc::Rc;

use super::ops::{Args, Env};
use super::values::{self, fail, ok, Answer, Marks, ProxyShims};
use crate::effects::context::EntryCtx;
use crate::effects::events::Event;
use crate::effects::models;
use crate::error::ErrorValueKind;
use crate::subst::{self, Global, Resolver};
use crate::time;

/// The message Lua raises when an allocation fails (the preallocated LUA_ERRMEM string).
const LUA_MEMORY_ERROR: &str = "not enough memory";
pub const LOG_MAX_CHARS: usize = 4096;

fn table_arg(v: &Value) -> mlua::Result<Table> {
    match v {
        Value::Table(t) => Ok(t.clone()),
        other => Err(mlua::Error::runtime(format!("expected a table, got {}", other.type_name()))),
    }
}

/// Whether the run is being stopped (a control signal no `pcall` catches). A failed allocation
/// is recognised here by Lua's memory-error message and becomes the memory ceiling's stop.
/// Answers a plain boolean.
pub fn is_control(lua: &Lua, env: &Env, err: &Value) -> Answer {
    let c = &env.ctx;
    if is_memory_error(err) {
        c.run.stop_with(super::memory_limit_error(c).in_section(&c.heading()));
    }
    (c.run.stopped() || c.jump_to.get().is_some()).into_lua_multi(lua)
}

/// Whether an error is a failed allocation: Lua's own memory error (its preallocated message),
/// or one mlua raised from inside a Rust function and wrapped.
pub fn is_memory_error(err: &Value) -> bool {
    match err {
        Value::String(s) => s.as_bytes().as_ref() == LUA_MEMORY_ERROR.as_bytes(),
        Value::Error(e) => matches!(root_cause(e), mlua::Error::MemoryError(_)),
        _ => false,
    }
}

/// The error under the callback and context layers mlua wraps around what a Rust function raised.
fn root_cause(mut e: &mlua::Error) -> &mlua::Error {
    while let mlua::Error::CallbackError { cause, .. } | mlua::Error::WithContext { cause, .. } = e {
        e = cause;
    }
    e
}

/// `(kind, message)` of an error value Lua got from a Rust callback (mlua wraps those), so
/// Engine pcall hands prompts an error value with `kind` and `message` like every other.
pub fn error_parts(lua: &Lua, err: &Value) -> Answer {
    match mlua_error_message(err) {
        Some(message) => (ErrorValueKind::Lua.as_str(), message).into_lua_multi(lua),
        None => Ok(MultiValue::new()),
    }
}

/// The message of an error mlua wrapped (callback and context layers peeled off).
pub fn mlua_error_message(v: &Value) -> Option<String> {
    let Value::Error(e) = v else { return None };
    Some(match root_cause(e) {
        mlua::Error::RuntimeError(m) | mlua::Error::MemoryError(m) => m.clone(),
        other => other.to_string(),
    })
}

/// The H1 pass's argv as it starts: the parsed arguments as plain Lua values.
pub fn argv_initial(lua: &Lua, env: &Env) -> Answer {
    match &*env.ctx.chain.argv.borrow() {
        Some(j) => values::to_lua(lua, j, &env.marks).and_then(|v| v.into_lua_multi(lua)),
        None => Ok(MultiValue::new()),
    }
}

pub fn sys_get(lua: &Lua, env: &Env, key: &Value) -> Answer {
    let name = values::key_text(key);
    match sys_field(&env.ctx, &name) {
        Some(j) => ok(lua, values::to_lua(lua, &j, &env.marks)?),
        None => fail(lua, ErrorValueKind::Lua, format!("unknown sys field '{name}'")),
    }
}

pub fn ui_get(lua: &Lua, env: &Env, key: &Value) -> Answer {
    let ui = &env.ctx.run.ui;
    match values::key_text(key).as_str() {
        "kind" => ok(lua, ui.kind.as_str()),
        "interactive" => ok(lua, ui.interactive),
        other => fail(lua, ErrorValueKind::Lua, format!("unknown ui field '{other}'")),
    }
}

pub fn var_index(lua: &Lua, env: &Env, proxy: &Value, key: &Value) -> Answer {
    values::proxy_index(lua, shims_of(&env.shims)?, &table_arg(proxy)?, key)
}

pub fn var_newindex(lua: &Lua, env: &Env, proxy: &Value, key: &Value, value: &Value) -> Answer {
    values::proxy_newindex(lua, &env.marks, &table_arg(proxy)?, key, value)
}

pub fn var_len(lua: &Lua, proxy: &Value) -> Answer {
    values::proxy_len(lua, &table_arg(proxy)?)
}

pub fn var_pairs(lua: &Lua, proxy: &Value) -> Answer {
    values::proxy_pairs(lua, &table_arg(proxy)?)
}

/// `next` over any table (the proxies part's `next` asks first): proxies answer for the JSON
/// they show, any other table says it is none.
pub fn var_next(lua: &Lua, env: &Env, t: &Value, key: &Value) -> Answer {
    match t {
        Value::Table(t) => values::proxy_next(lua, shims_of(&env.shims)?, t, key),
        _ => ok(lua, false),
    }
}

/// `json.array(...)`: a table marked as a JSON array.
pub fn json_array(lua: &Lua, env: &Env, items: MultiValue) -> Answer {
    let t = lua.create_sequence_from(items)?;
    t.set_metatable(Some(env.marks.array_mt.clone()))?;
    t.into_lua_multi(lua)
}

pub fn json_encode(lua: &Lua, env: &Env, v: &Value) -> Answer {
    match values::to_json(v, &env.marks) {
        Ok(j) => ok(lua, j.to_string()),
        Err(e) => fail(lua, ErrorValueKind::Lua, format!("json.encode: {}", e.describe())),
    }
}

/// Compiles a Pack prelude's source in the environment bootstrap.lua made for it.
pub fn load_prelude(lua: &Lua, source: &Value, id: &Value, env: &Value) -> Answer {
    let Value::String(source) = source else { return fail(lua, ErrorValueKind::Lua, "a prelude must be Lua source text") };
    let compiled = lua
        .load(source.as_bytes().to_vec())
        .set_name(format!("=pack:{}", values::key_text(id)))
        .set_environment(table_arg(env)?)
        .set_mode(mlua::chunk::ChunkMode::Text)
        .into_function();
    match compiled {
        Ok(f) => ok(lua, f),
        Err(mlua::Error::SyntaxError { message, .. }) => fail(lua, ErrorValueKind::Lua, message),
        Err(e) => fail(lua, ErrorValueKind::Lua, e.to_string()),
    }
}

/// `var` itself, made the first time a block reads it (bootstrap.lua's `_G` metatable), with
/// the proxies' metamethods (the `proxies` part's `shims`, kept for every proxy made after).
pub fn var_root(lua: &Lua, env: &Env, shims: &Value) -> Answer {
    let handle = values::JsonHandle { root: env.ctx.chain.var.clone(), path: Vec::new(), access: values::Access::Var };
    ok(lua, values::make_proxy(lua, keep_shims(&env.shims, shims)?, handle)?)
}

/// `var` as a prelude sees it: read-only at every depth (the shims as for [`var_root`]).
pub fn prelude_var(lua: &Lua, env: &Env, shims: &Value) -> Answer {
    let handle = values::JsonHandle { root: env.ctx.chain.var.clone(), path: Vec::new(), access: values::Access::PreludeVar };
    ok(lua, values::make_proxy(lua, keep_shims(&env.shims, shims)?, handle)?)
}

/// The VM's proxy metamethods: the ones kept, or else `shims` (a table of `index`, `newindex`,
/// `len`, `pairs`), kept from now on.
fn keep_shims<'a>(cell: &'a OnceCell<ProxyShims>, shims: &Value) -> mlua::Result<&'a ProxyShims> {
    if let Some(kept) = cell.get() {
        return Ok(kept);
    }
    let Value::Table(t) = shims else {
        return Err(mlua::Error::runtime("var's first read needs the proxies' metamethods"));
    };
    let made =
        ProxyShims { index: t.raw_get("index")?, newindex: t.raw_get("newindex")?, len: t.raw_get("len")?, pairs: t.raw_get("pairs")? };
    Ok(cell.get_or_init(|| made))
}

/// bootstrap.lua says when a prelude starts and stops loading (suspending calls are refused).
pub fn prelude_loading(env: &Env, loading: &Value) -> Answer {
    env.ctx.loading_prelude.set(matches!(loading, Value::Boolean(true)));
    Ok(MultiValue::new())
}

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

/// The preludes of the declared Packs, in `uses:` order: a list of `{ id, source }`.
pub fn preludes(lua: &Lua, env: &Env) -> Answer {
    let list = lua.create_table()?;
    for (id, source) in prelude_sources(&env.ctx) {
        list.raw_set(list.raw_len() + 1, lua.create_sequence_from([id, source])?)?;
    }
    ok(lua, list)
}

/// Whether any declared Pack has a prelude (asked before every entry's first block, in Rust:
/// most prompts have none, and asking Lua cost the entry a call and a list).
pub fn has_preludes(ctx: &EntryCtx) -> bool {
    prelude_sources(ctx).next().is_some()
}

/// The declared Packs' preludes, in `uses:` order: `(pack id, source)`.
fn prelude_sources(c: &EntryCtx) -> impl Iterator<Item = (&str, &str)> {
    c.run.prompt.front.uses.iter().filter_map(|entry| {
        let id = crate::ids::pack_id(entry);
        let p = c.run.catalog.pack(id)?;
        let h = c.run.catalog.packs[p].host?;
        c.run.host_packs[h].prelude.as_deref().map(|source| (id, source))
    })
}

pub fn argv_frozen(lua: &Lua, env: &Env, shims: &Value) -> Answer {
    let argv = env.ctx.chain.argv.borrow().clone();
    match argv {
        None | Some(Json::Null) => ok(lua, Value::Nil),
        Some(j @ (Json::Object(_) | Json::Array(_))) => {
            let handle =
                values::JsonHandle { root: Rc::new(std::cell::RefCell::new(j)), path: Vec::new(), access: values::Access::FrozenArgv };
            ok(lua, values::make_proxy(lua, keep_shims(&env.shims, shims)?, handle)?)
        }
        Some(scalar) => ok(lua, values::to_lua(lua, &scalar, &env.marks)?),
    }
}

pub fn json_decode(lua: &Lua, env: &Env, v: &Value) -> Answer {
    let m = &env.marks;
    let Value::String(s) = v else {
        return fail(lua, ErrorValueKind::Lua, format!("json.decode takes a string, got {}", v.type_name()));
    };
    match crate::json_text::parse(&s.as_bytes()) {
        Ok(j) => ok(lua, values::to_lua(lua, &j, m)?),
        Err(e) => fail(lua, ErrorValueKind::Lua, format!("json.decode: invalid JSON: {e}")),
    }
}

pub fn untrusted(lua: &Lua, env: &Env, v: &Value) -> Answer {
    let c = &env.ctx;
    let text = match v {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(_) | Value::Number(_) => match lua.coerce_string(v.clone())? {
            Some(s) => s.to_string_lossy(),
            None => String::new(),
        },
        other => return fail(lua, ErrorValueKind::Lua, format!("untrusted takes a string, got {}", other.type_name())),
    };
    ok(lua, crate::untrusted::envelope(&text, &c.run.nonce))
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
        Ok(text) => ok(lua, text),
        Err(msg) => fail(lua, ErrorValueKind::Model, msg),
    }
}

fn shims_of(cell: &OnceCell<ProxyShims>) -> mlua::Result<&ProxyShims> {
    cell.get().ok_or_else(|| mlua::Error::runtime("var proxies are not ready before var was first read"))
}

/// The fields of `sys` (docs/language.md, "Run facts"). Fields that
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
        "index" => Json::from(ctx.chain.index?),
        // Present once the entry's first model round has answered (models.infer never sets them).
        "model" | "reply_finish_reason" => {
            let facts = ctx.model_facts.borrow();
            let (model, finish) = facts.as_ref()?;
            Json::from(if name == "model" { model.as_str() } else { finish.as_str() })
        }
        _ => return None,
    })
}

pub fn prompt_get(lua: &Lua, env: &Env, key: &Value) -> Answer {
    let (ctx, marks) = (&env.ctx, &env.marks);
    let p = &ctx.run.prompt;
    match values::key_text(key).as_str() {
        "name" => ok(lua, p.front.name.clone()),
        "description" => ok(lua, p.front.description.clone()),
        "sections" => {
            let headings: Vec<Json> = p.sections.iter().map(|s| Json::from(s.heading.clone())).collect();
            ok(lua, values::to_lua(lua, &Json::Array(headings), marks)?)
        }
        other => fail(lua, ErrorValueKind::Lua, format!("unknown prompt field '{other}'")),
    }
}

pub fn prompt_list(lua: &Lua, env: &Env, heading: &Value) -> Answer {
    let (ctx, marks) = (&env.ctx, &env.marks);
    let Value::String(h) = heading else {
        return fail(lua, ErrorValueKind::Lua, format!("prompt.list takes a section heading, got {}", heading.type_name()));
    };
    let p = &ctx.run.prompt;
    match p.resolve(ctx.section, &h.to_string_lossy()) {
        Err(msg) => fail(lua, ErrorValueKind::Lua, format!("prompt.list: {msg}")),
        Ok(i) => match &p.sections[i].list {
            Some(items) => ok(lua, values::to_lua(lua, &Json::from(items.clone()), marks)?),
            None => fail(lua, ErrorValueKind::Lua, format!("prompt.list: section {:?} holds no Markdown list", p.sections[i].heading)),
        },
    }
}

pub fn log(lua: &Lua, env: &Env, message: &Value) -> Answer {
    let ctx = &env.ctx;
    let Value::String(s) = message else {
        return fail(lua, ErrorValueKind::Lua, format!("log takes a message string, got {}", message.type_name()));
    };
    let Ok(text) = s.to_str() else {
        return fail(lua, ErrorValueKind::Lua, "log message is not valid UTF-8");
    };
    let text = text.to_string();
    if text.chars().count() > LOG_MAX_CHARS {
        return fail(lua, ErrorValueKind::Lua, format!("log message is longer than {LOG_MAX_CHARS} characters"));
    }
    if let Some(c) = text.chars().find(|&c| c.is_control() && c != '\n' && c != '\t') {
        return fail(lua, ErrorValueKind::Lua, format!("log message contains the control character U+{:04X}", c as u32));
    }
    ctx.run.emit(Event::Log, Some(ctx.section_name()), crate::obj!({ "id": ctx.id, "message": text }));
    ok(lua, ())
}

/// The first read of `prose` in a block renders it; later reads return the same string.
pub fn read_prose(lua: &Lua, env: &Env) -> Answer {
    let (ctx, marks) = (&env.ctx, &env.marks);
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
        Err(e) => fail(lua, ErrorValueKind::Lua, e.to_string()),
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
    fn var_at(&self, path: &[&str]) -> Option<Json> {
        subst::walk(&self.ctx.chain.var.borrow(), path).cloned()
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
