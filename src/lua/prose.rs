//! `prose`: the block's pending prose, rendered by substitution (`001`) the first time a block
//! reads it, over `var`, `sys`, the chain's arguments, the seeded item and the section's globals.

use mlua::{Lua, Value};
use serde_json::Value as Json;

use super::env::{fail, ok, Answer, Env, Marks};
use super::run_values::sys_field;
use super::values::convert;
use crate::effects::context::EntryCtx;
use crate::error::ErrorValueKind;
use crate::subst::{self, Global, Resolver};

/// The first read of `prose` in a block renders it; later reads return the same string.
pub fn read_prose(lua: &Lua, env: &Env) -> Answer {
    let (ctx, marks) = (&env.ctx, &env.marks);
    if let Some(text) = ctx.prose.rendered() {
        return ok(lua, &*text);
    }
    let raw = ctx.prose.raw();
    let argv = ctx.chain.argv.borrow().clone();
    let mut resolver = LuaResolver { lua, ctx, marks, argv };
    match subst::render(&raw, &mut resolver) {
        Ok(text) => {
            ctx.prose.set_rendered(text.clone());
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
            Ok(v) => match convert::to_json(&v, self.marks) {
                Ok(j) => Global::Data(j),
                Err(_) => Global::NotData,
            },
            Err(_) => Global::NotData,
        }
    }
}
