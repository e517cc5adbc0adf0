//! Pack preludes' Rust side (`002`): the declared Packs' prelude sources, each compiled in the
//! environment bootstrap.lua made for it (lua/parts/preludes.lua installs them), and the flag
//! that refuses suspending calls while one loads.

use mlua::{Lua, MultiValue, Value};

use super::env::{fail, ok, table_arg, Answer, Env};
use super::values::convert;
use crate::effects::context::EntryCtx;
use crate::error::ErrorValueKind;

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

/// Compiles a Pack prelude's source in the environment bootstrap.lua made for it.
pub fn load_prelude(lua: &Lua, source: &Value, id: &Value, env: &Value) -> Answer {
    let Value::String(source) = source else { return fail(lua, ErrorValueKind::Lua, "a prelude must be Lua source text") };
    let compiled = lua
        .load(source.as_bytes().to_vec())
        .set_name(format!("=pack:{}", convert::key_text(id)))
        .set_environment(table_arg(env)?)
        .set_mode(mlua::chunk::ChunkMode::Text)
        .into_function();
    match compiled {
        Ok(f) => ok(lua, f),
        Err(mlua::Error::SyntaxError { message, .. }) => fail(lua, ErrorValueKind::Lua, message),
        Err(e) => fail(lua, ErrorValueKind::Lua, e.to_string()),
    }
}

/// bootstrap.lua says when a prelude starts and stops loading (suspending calls are refused).
pub fn prelude_loading(env: &Env, loading: &Value) -> Answer {
    env.ctx.set_loading_prelude(matches!(loading, Value::Boolean(true)));
    Ok(MultiValue::new())
}
