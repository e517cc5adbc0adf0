//! `var`'s Engine functions: the root proxy, made on the block's first read of `var` (and the
//! read-only one a Pack prelude sees), and the metamethods every proxy's shims call
//! (lua/parts/proxies.lua) over `values::proxy`.

use mlua::{Lua, Value};

use super::env::{ok, table_arg, Answer, Env};
use super::values::json_handle::{Access, JsonHandle};
use super::values::proxy;

/// `var` itself, made the first time a block reads it (bootstrap.lua's `_G` metatable), with
/// the proxies' metamethods (the `proxies` part's `shims`, kept for every proxy made after).
pub fn var_root(lua: &Lua, env: &Env, shims: &Value) -> Answer {
    let handle = JsonHandle { root: env.ctx.chain.var.clone(), path: Vec::new(), access: Access::Var };
    ok(lua, proxy::make_proxy(lua, env.keep_shims(shims)?, handle)?)
}

/// `var` as a prelude sees it: read-only at every depth (the shims as for [`var_root`]).
pub fn prelude_var(lua: &Lua, env: &Env, shims: &Value) -> Answer {
    let handle = JsonHandle { root: env.ctx.chain.var.clone(), path: Vec::new(), access: Access::PreludeVar };
    ok(lua, proxy::make_proxy(lua, env.keep_shims(shims)?, handle)?)
}

pub fn var_index(lua: &Lua, env: &Env, proxy: &Value, key: &Value) -> Answer {
    proxy::proxy_index(lua, env.shims()?, &table_arg(proxy)?, key)
}

pub fn var_newindex(lua: &Lua, env: &Env, proxy: &Value, key: &Value, value: &Value) -> Answer {
    proxy::proxy_newindex(lua, &env.marks, &table_arg(proxy)?, key, value)
}

pub fn var_len(lua: &Lua, proxy: &Value) -> Answer {
    proxy::proxy_len(lua, &table_arg(proxy)?)
}

pub fn var_pairs(lua: &Lua, proxy: &Value) -> Answer {
    proxy::proxy_pairs(lua, &table_arg(proxy)?)
}

/// `next` over any table (the proxies part's `next` asks first): proxies answer for the JSON
/// they show, any other table says it is none.
pub fn var_next(lua: &Lua, env: &Env, t: &Value, key: &Value) -> Answer {
    match t {
        Value::Table(t) => proxy::proxy_next(lua, env.shims()?, t, key),
        _ => ok(lua, false),
    }
}

/// Whether a block assigned the global `var` (a plain table, `var.sub`, anything but the root
/// proxy): Lua lets a block rebind the name, and what it then wrote would silently stay in that
/// VM. `nil` (never read, or cleared: the next read makes the proxy again) is not a replacement.
pub fn var_replaced(lua: &Lua) -> bool {
    match lua.globals().raw_get::<Value>("var") {
        Ok(Value::Nil) => false,
        Ok(Value::Table(t)) => {
            !proxy::proxy_handle(&t).is_some_and(|h| h.json().is_some_and(|j| j.path.is_empty() && j.access == Access::Var))
        }
        _ => true,
    }
}
