//! Lua values and JSON data: the conversions every Engine global shares, and the proxies that
//! let Lua read and write JSON held by the Engine (`var`, the frozen `argv`).
//!
//! JSON here is `serde_json::Value` with sorted object keys, which is exactly the compact,
//! key-sorted rendering substitution needs (`001`, "How values render").

use mlua::{IntoLuaMulti, Lua, MultiValue, Table, UserDataRef, Value};
use serde_json::{Map, Number, Value as Json};
use std::cell::RefCell;
use std::rc::Rc;

use super::handles::Handle;
use crate::effects::memory::{self, json_size, member_size, Held};
use crate::effects::Refusal;
use crate::error::ErrorValueKind;

/// Why a Lua value is not JSON data.
#[derive(Debug, Clone, PartialEq)]
pub enum NotJson {
    /// A function, userdata or thread (the Lua type name).
    Type(&'static str),
    /// A table that refers to itself or nests deeper than [`MAX_DEPTH`].
    Cycle,
    /// A key that cannot be a JSON object key.
    Key(&'static str),
    /// NaN or an infinity.
    NotFinite,
}

impl NotJson {
    pub fn describe(&self) -> String {
        match self {
            NotJson::Type(t) => format!("a {t} is not JSON data"),
            NotJson::Cycle => "a table that refers to itself (or nests deeper than 200 levels) is not JSON data".into(),
            NotJson::Key(t) => format!("a table key of type {t} is not JSON data (keys are strings, or integers 1..n for arrays)"),
            NotJson::NotFinite => "NaN and infinities are not JSON data".into(),
        }
    }
}

pub const MAX_DEPTH: usize = 200;

/// The per-VM markers conversions need: the `json.array` metatable and `json.null`.
#[derive(Clone)]
pub struct Marks {
    pub array_mt: Table,
}

impl Marks {
    /// Fresh markers for `lua`: the `json.array` metatable as the Engine VM builds it. Enough
    /// to convert values in a bare Lua state (tests, tools) without the Engine globals.
    pub fn new(lua: &Lua) -> mlua::Result<Marks> {
        let array_mt = lua.create_table()?;
        array_mt.raw_set("__name", "json.array")?;
        array_mt.raw_set("__metatable", "json.array")?;
        Ok(Marks { array_mt })
    }
}

pub fn json_null() -> Value {
    Value::LightUserData(mlua::LightUserData(std::ptr::null_mut()))
}

pub fn is_json_null(v: &Value) -> bool {
    matches!(v, Value::LightUserData(p) if p.0.is_null())
}

/// Converts a Lua value to JSON. Tables marked by `json.array` are arrays; other tables are
/// arrays when their keys are exactly 1..n (n >= 1), objects otherwise (integer keys become
/// decimal strings); an empty unmarked table is `{}`. Engine proxies convert to what they show.
pub fn to_json(v: &Value, marks: &Marks) -> Result<Json, NotJson> {
    to_json_at(v, marks, 0)
}

fn number(n: f64) -> Result<Json, NotJson> {
    Number::from_f64(n).map(Json::Number).ok_or(NotJson::NotFinite)
}

fn to_json_at(v: &Value, marks: &Marks, depth: usize) -> Result<Json, NotJson> {
    if depth > MAX_DEPTH {
        return Err(NotJson::Cycle);
    }
    Ok(match v {
        Value::Nil => Json::Null,
        Value::Boolean(b) => Json::Bool(*b),
        Value::Integer(i) => Json::Number((*i).into()),
        Value::Number(n) => number(*n)?,
        Value::String(s) => Json::String(s.to_string_lossy()),
        Value::LightUserData(p) if p.0.is_null() => Json::Null,
        Value::Table(t) => {
            let mt = t.metatable();
            if let Some(mt) = &mt {
                if let Ok(Value::UserData(ud)) = mt.raw_get::<Value>("__runvil_json") {
                    if let Some(h) = ud.borrow::<Handle>().ok().as_deref().and_then(Handle::json) {
                        return Ok(h.get().unwrap_or(Json::Null));
                    }
                }
            }
            let is_array_marked = mt.as_ref().map(|m| m == &marks.array_mt).unwrap_or(false);
            let len = t.raw_len();
            let mut count = 0usize;
            let mut all_index = true;
            for pair in t.pairs::<Value, Value>() {
                let (k, _) = pair.map_err(|_| NotJson::Cycle)?;
                count += 1;
                match k {
                    Value::Integer(i) if i >= 1 && (i as usize) <= len => {}
                    _ => all_index = false,
                }
            }
            if is_array_marked || (count > 0 && all_index && count == len) {
                let mut items = Vec::with_capacity(len);
                for i in 1..=len {
                    let item: Value = t.raw_get(i).map_err(|_| NotJson::Cycle)?;
                    items.push(to_json_at(&item, marks, depth + 1)?);
                }
                Json::Array(items)
            } else {
                let mut map = Map::new();
                for pair in t.pairs::<Value, Value>() {
                    let (k, item) = pair.map_err(|_| NotJson::Cycle)?;
                    let key = match &k {
                        Value::String(s) => s.to_string_lossy(),
                        Value::Integer(i) => i.to_string(),
                        other => return Err(NotJson::Key(other.type_name())),
                    };
                    map.insert(key, to_json_at(&item, marks, depth + 1)?);
                }
                Json::Object(map)
            }
        }
        other => return Err(NotJson::Type(other.type_name())),
    })
}

/// Plain Lua values for JSON (what `json.decode` returns and the H1 pass's argv starts as):
/// arrays carry the `json.array` marker, null is `json.null`.
pub fn to_lua(lua: &Lua, j: &Json, marks: &Marks) -> mlua::Result<Value> {
    Ok(match j {
        Json::Null => json_null(),
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => number_to_lua(n),
        Json::String(s) => Value::String(lua.create_string(s)?),
        Json::Array(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, to_lua(lua, item, marks)?)?;
            }
            t.set_metatable(Some(marks.array_mt.clone()))?;
            Value::Table(t)
        }
        Json::Object(map) => {
            let t = lua.create_table_with_capacity(0, map.len())?;
            for (k, item) in map {
                t.raw_set(k.as_str(), to_lua(lua, item, marks)?)?;
            }
            Value::Table(t)
        }
    })
}

pub fn number_to_lua(n: &Number) -> Value {
    match n.as_i64() {
        Some(i) => Value::Integer(i),
        None => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
    }
}

/// One step of a path into JSON data.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// Who may write through a proxy, and how a refused write is worded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Access {
    /// `var`: every write is checked to be JSON data at the assigning line.
    Var,
    /// The frozen `argv` of the sections after the H1 pass.
    FrozenArgv,
    /// `var` as Pack prelude code sees it: read-only at every depth.
    PreludeVar,
}

/// What a proxy's metatable keeps (as `Handle::Json`): which JSON value, and where inside it.
#[derive(Debug, Clone)]
pub struct JsonHandle {
    pub root: Rc<RefCell<Json>>,
    pub path: Vec<Step>,
    pub access: Access,
}

impl JsonHandle {
    fn root_name(&self) -> &'static str {
        match self.access {
            Access::Var | Access::PreludeVar => "var",
            Access::FrozenArgv => "argv",
        }
    }

    /// `var.row.cells[2]`: how messages name a place.
    pub fn describe(&self, extra: Option<&Step>) -> String {
        let mut s = self.root_name().to_string();
        for step in self.path.iter().chain(extra) {
            match step {
                Step::Key(k) => {
                    s.push('.');
                    s.push_str(k);
                }
                Step::Index(i) => s.push_str(&format!("[{i}]")),
            }
        }
        s
    }

    /// The value the handle addresses, by reference: nothing is copied. `None` when the place no
    /// longer exists (an ancestor was replaced). Never call into Lua while holding it: a Lua
    /// finalizer could write `var` and find it borrowed.
    pub fn value(&self) -> Option<std::cell::Ref<'_, Json>> {
        std::cell::Ref::filter_map(self.root.borrow(), |root| {
            let mut cur = root;
            for step in &self.path {
                cur = child(cur, step)?;
            }
            Some(cur)
        })
        .ok()
    }

    /// A copy of the value the handle addresses (what crosses out of `var` as data).
    pub fn get(&self) -> Option<Json> {
        self.value().map(|j| j.clone())
    }

    fn with_target<R>(&self, f: impl FnOnce(&mut Json) -> R) -> Option<R> {
        let mut root = self.root.borrow_mut();
        let mut cur = &mut *root;
        for step in &self.path {
            cur = match (step, cur) {
                (Step::Key(k), Json::Object(m)) => m.get_mut(k)?,
                (Step::Index(i), Json::Array(a)) => a.get_mut(i.checked_sub(1)?)?,
                _ => return None,
            };
        }
        Some(f(cur))
    }
}

/// The value one step inside a container, by reference.
fn child<'a>(container: &'a Json, step: &Step) -> Option<&'a Json> {
    match (step, container) {
        (Step::Key(k), Json::Object(m)) => m.get(k),
        (Step::Index(i), Json::Array(a)) => a.get(i.checked_sub(1)?),
        _ => None,
    }
}

/// The metamethod shims bootstrap.lua defines for proxies, kept to build new proxies.
#[derive(Clone)]
pub struct ProxyShims {
    pub index: mlua::Function,
    pub newindex: mlua::Function,
    pub len: mlua::Function,
    pub pairs: mlua::Function,
}

pub fn make_proxy(lua: &Lua, shims: &ProxyShims, handle: JsonHandle) -> mlua::Result<Table> {
    let guard = match handle.access {
        Access::Var => "var holds JSON data: its metatable is the Engine's",
        Access::FrozenArgv => "argv is frozen",
        Access::PreludeVar => "var is read-only",
    };
    let mt = lua.create_table_with_capacity(0, 6)?;
    mt.raw_set("__index", shims.index.clone())?;
    mt.raw_set("__newindex", shims.newindex.clone())?;
    mt.raw_set("__len", shims.len.clone())?;
    mt.raw_set("__pairs", shims.pairs.clone())?;
    mt.raw_set("__metatable", guard)?;
    mt.raw_set("__runvil_json", lua.create_userdata(Handle::Json(handle))?)?;
    let t = lua.create_table()?;
    t.set_metatable(Some(mt))?;
    Ok(t)
}

/// The handle behind an Engine proxy (`None` for any other table). Borrowed from the userdata:
/// use it, then let it go.
pub fn proxy_handle(t: &Table) -> Option<UserDataRef<Handle>> {
    match t.metatable()?.raw_get::<Value>("__runvil_json").ok()? {
        Value::UserData(ud) => ud.borrow::<Handle>().ok().filter(|h| h.json().is_some()),
        _ => None,
    }
}

/// A JSON scalar as a Lua value; `None` for an array or object.
fn scalar_to_lua(lua: &Lua, j: &Json) -> mlua::Result<Option<Value>> {
    Ok(Some(match j {
        Json::Array(_) | Json::Object(_) => return Ok(None),
        Json::Null => json_null(),
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => number_to_lua(n),
        Json::String(s) => Value::String(lua.create_string(s)?),
    }))
}

/// A key Lua used on a proxy, as a step into the JSON container it addresses.
fn step_for(container: &Json, key: &Value) -> Result<Option<Step>, String> {
    match (container, key) {
        (Json::Array(_), Value::Integer(i)) if *i >= 1 => Ok(Some(Step::Index(*i as usize))),
        (Json::Array(_), Value::Number(n)) if n.fract() == 0.0 && *n >= 1.0 => Ok(Some(Step::Index(*n as usize))),
        (Json::Array(_), _) => Ok(None),
        (Json::Object(_), Value::String(s)) => Ok(Some(Step::Key(s.to_string_lossy()))),
        (Json::Object(_), Value::Integer(i)) => Ok(Some(Step::Key(i.to_string()))),
        (Json::Object(_), other) => Err(format!("keys must be strings or integers, got {}", other.type_name())),
        _ => Ok(None),
    }
}

pub type Answer = mlua::Result<MultiValue>;

pub fn ok(lua: &Lua, values: impl mlua::IntoLuaMulti) -> Answer {
    let mut mv = values.into_lua_multi(lua)?;
    internalize(lua, &mut mv)?;
    mv.push_front(Value::Boolean(true));
    Ok(mv)
}

/// Not generic, so `ok`'s many instantiations share one copy.
#[inline(never)]
fn internalize(lua: &Lua, mv: &mut MultiValue) -> mlua::Result<()> {
    // mlua makes an owned `String`/`Vec<u8>` a Lua 5.5 *external* string, whose bytes stay on
    // the Rust heap where Lua's memory limit never sees them (model replies and store reads
    // bypassed the ceiling). Copied into Lua's own heap, every string the engine hands a block
    // counts against the memory ceiling.
    for v in mv.iter_mut() {
        if let Value::String(s) = v {
            let copy = lua.create_string(&*s.as_bytes())?;
            *v = Value::String(copy);
        }
    }
    Ok(())
}

/// The check convention's failure: bootstrap.lua raises an error value of this kind.
pub fn fail(lua: &Lua, kind: ErrorValueKind, message: impl AsRef<str>) -> Answer {
    (false, kind.as_str(), message.as_ref()).into_lua_multi(lua)
}

/// A refused step as the check convention's failure, with the `name` field it may carry.
pub fn refuse(lua: &Lua, r: Refusal) -> Answer {
    let mut mv = fail(lua, r.kind, &r.message)?;
    if let Some(name) = r.name {
        let fields = lua.create_table()?;
        fields.raw_set("name", name)?;
        mv.push_back(Value::Table(fields));
    }
    Ok(mv)
}

/// The scalar return rule (blocks and local tool handlers): the first returned value, if not
/// nil, becomes text.
pub fn scalar_text(lua: &Lua, v: &Value) -> Result<Option<String>, String> {
    let text = match v {
        Value::Nil => return Ok(None),
        Value::Boolean(b) => b.to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Number(_) => lua.coerce_string(v.clone()).ok().flatten().map(|s| s.to_string_lossy()).unwrap_or_default(),
        Value::String(s) => match s.to_str() {
            Ok(t) => t.to_string(),
            Err(_) => return Err("cannot return a string that is not valid UTF-8 as a result".into()),
        },
        other => return Err(format!("cannot return a {} as a result", other.type_name())),
    };
    Ok(Some(text))
}

/// What a read through a proxy found: a scalar copied into Lua, or a container to proxy.
enum Found {
    Nothing,
    /// A copy of the scalar (a string is copied once, then into Lua).
    Scalar(Json),
    Container(Step),
}

/// `proxy[key]`: walks the JSON by reference; only a scalar is copied (into Lua), a container
/// becomes a new proxy holding its path.
pub fn proxy_index(lua: &Lua, shims: &ProxyShims, t: &Table, key: &Value) -> Answer {
    let Some(handle) = proxy_handle(t) else { return ok(lua, Value::Nil) };
    let Some(h) = handle.json() else { return ok(lua, Value::Nil) };
    // Decided under the borrow, converted after it: creating a Lua string may run a finalizer.
    let found = match h.value() {
        None => Found::Nothing,
        Some(here) => match step_for(&here, key) {
            Ok(Some(step)) => match child(&here, &step) {
                None => Found::Nothing,
                Some(Json::Array(_) | Json::Object(_)) => Found::Container(step),
                Some(scalar) => Found::Scalar(scalar.clone()),
            },
            _ => Found::Nothing,
        },
    };
    match found {
        Found::Nothing => ok(lua, Value::Nil),
        Found::Scalar(j) => ok(lua, scalar_to_lua(lua, &j)?.unwrap_or(Value::Nil)),
        Found::Container(step) => {
            let mut path = Vec::with_capacity(h.path.len() + 1);
            path.extend_from_slice(&h.path);
            path.push(step);
            ok(lua, make_proxy(lua, shims, JsonHandle { root: h.root.clone(), path, access: h.access })?)
        }
    }
}

/// The change in `var`'s compact JSON text (`effects::memory::json_size`) that setting `step` of
/// `container` to `new` (`None` removes) makes, or why the write is refused.
fn write_delta(container: &Json, step: &Step, new: Option<&Json>, place: &str) -> Result<i64, String> {
    let size = |j: &Json| json_size(j) as i64;
    Ok(match (container, step, new) {
        (Json::Object(m), Step::Key(k), Some(j)) => match m.get(k) {
            Some(old) => size(j) - size(old),
            None => (member_size(k, j) + usize::from(!m.is_empty())) as i64,
        },
        (Json::Object(m), Step::Key(k), None) => match m.get(k) {
            Some(old) => -((member_size(k, old) + usize::from(m.len() > 1)) as i64),
            None => 0,
        },
        (Json::Array(a), Step::Index(i), new) => {
            let (i, len) = (*i, a.len());
            match new {
                Some(j) if i <= len => size(j) - size(&a[i - 1]),
                Some(j) if i == len + 1 => size(j) + i64::from(len > 0),
                Some(_) => return Err(format!("cannot set {place}: the array has {len} items, and JSON arrays have no holes")),
                None if i == len => -(size(&a[len - 1]) + i64::from(len > 1)),
                None if i < len => size(&Json::Null) - size(&a[i - 1]),
                None => 0,
            }
        }
        _ => 0,
    })
}

/// Sets `step` of `container` to `new` (`None` removes), once [`write_delta`] allowed it.
fn apply_write(container: &mut Json, step: Step, new: Option<Json>) {
    match (container, step, new) {
        (Json::Object(m), Step::Key(k), Some(j)) => {
            m.insert(k, j);
        }
        (Json::Object(m), Step::Key(k), None) => {
            m.remove(&k);
        }
        (Json::Array(a), Step::Index(i), new) => {
            let len = a.len();
            match new {
                Some(j) if i <= len => a[i - 1] = j,
                Some(j) if i == len + 1 => a.push(j),
                Some(_) => {}
                // Removing the last item shortens the array; a hole elsewhere becomes null.
                None if i == len => {
                    a.pop();
                }
                None if i < len => a[i - 1] = Json::Null,
                None => {}
            }
        }
        _ => {}
    }
}

/// `proxy[key] = value`: converts the value (checking it is JSON data), charges the size change
/// of `var` against the memory ceiling (`effects::memory`), then writes it in place.
pub fn proxy_newindex(lua: &Lua, marks: &Marks, t: &Table, key: &Value, value: &Value) -> Answer {
    let Some(handle) = proxy_handle(t) else { return ok(lua, ()) };
    let Some(h) = handle.json() else { return ok(lua, ()) };
    let k = || match key {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(i) => i.to_string(),
        other => other.type_name().to_string(),
    };
    match h.access {
        Access::FrozenArgv => return fail(lua, ErrorValueKind::Lua, format!("argv is frozen after the H1 pass; cannot set '{}'", k())),
        Access::PreludeVar => {
            let place = if h.path.is_empty() { "var".to_string() } else { h.describe(None) };
            let suffix = if h.path.is_empty() { " inside a Pack prelude" } else { "" };
            return fail(lua, ErrorValueKind::Lua, format!("{place} is read-only{suffix}; cannot set '{}'", k()));
        }
        Access::Var => {}
    }
    // An empty table is an array or an object by its first key, as a Lua table is: `{}` then
    // `[1] = x` is the array `[x]`, `[]` then `.name = x` the object `{"name":x}`. Decided now,
    // applied with the write, so a refused write leaves the container as it was.
    let retyped = if value.is_nil() { None } else { h.value().and_then(|here| retype_empty(&here, key)) };
    let Some(step) = h.value().map(|here| step_for(retyped.as_ref().unwrap_or(&here), key)) else {
        return fail(lua, ErrorValueKind::Lua, format!("{} no longer exists in var", h.describe(None)));
    };
    let step = match step {
        Ok(Some(step)) => step,
        Ok(None) => {
            return fail(lua, ErrorValueKind::Lua, format!("{} is an array: its keys are integers from 1", h.describe(None)));
        }
        Err(e) => return fail(lua, ErrorValueKind::Lua, format!("{}: {e}", h.describe(None))),
    };
    let new = if value.is_nil() {
        None
    } else {
        match to_json(value, marks) {
            Ok(j) => Some(j),
            Err(e) => {
                return fail(
                    lua,
                    ErrorValueKind::Lua,
                    format!("var holds JSON data only: cannot set {}: {}", h.describe(Some(&step)), e.describe()),
                );
            }
        }
    };
    let place = h.describe(Some(&step));
    let delta = match h.value().map(|here| write_delta(retyped.as_ref().unwrap_or(&here), &step, new.as_ref(), &place)) {
        None => return ok(lua, ()),
        Some(Err(e)) => return fail(lua, ErrorValueKind::Lua, e),
        Some(Ok(delta)) => delta,
    };
    if delta != 0 {
        // A bare state (no entry, as in unit tests) charges nothing.
        if let Some(ctx) = super::entry_of(lua) {
            if let Err(message) = memory::hold(&ctx, Held::Var, delta) {
                return fail(lua, ErrorValueKind::Lua, message);
            }
        }
    }
    let removing = new.is_none();
    let shrink = h.with_target(|target| {
        if let Some(empty) = retyped {
            *target = empty;
        }
        apply_write(target, step, new);
        if removing {
            sequence_to_array(target)
        } else {
            0
        }
    });
    // What an object that became an array saves: never refused, it only frees.
    if let (Some(saved @ 1..), Some(ctx)) = (shrink, super::entry_of(lua)) {
        let _ = memory::hold(&ctx, Held::Var, -(saved as i64));
    }
    ok(lua, ())
}

/// The empty container of the other kind when `container` is empty and `key` asks for it: `1`
/// makes an array, any other key an object. `None` when the write keeps the container's kind.
fn retype_empty(container: &Json, key: &Value) -> Option<Json> {
    let first_item = matches!(key, Value::Integer(1)) || matches!(key, Value::Number(n) if *n == 1.0);
    match container {
        Json::Object(m) if m.is_empty() && first_item => Some(Json::Array(Vec::new())),
        Json::Array(a) if a.is_empty() && !first_item => Some(Json::Object(Map::new())),
        _ => None,
    }
}

/// The integer an object key stands for when Lua would have used that integer (`"3"`, not
/// `"03"` or `"-1"`): objects take integer keys as their decimal text.
fn index_key(k: &str) -> Option<usize> {
    let i: usize = k.parse().ok()?;
    (i >= 1 && !k.starts_with('0') && !k.starts_with('+')).then_some(i)
}

/// `#` of an object: how many of its keys run `"1"`, `"2"`, ... without a gap (a border, as
/// Lua's `#` gives for a table with a sequence part).
fn object_border(m: &Map<String, Json>) -> usize {
    (1..).take_while(|i: &usize| m.contains_key(&i.to_string())).count()
}

/// After a removal, an object whose keys are now exactly `"1"`..`"n"` is the array a Lua table
/// with those keys encodes as. Returns the bytes of JSON text that saves (0 when nothing changed).
fn sequence_to_array(container: &mut Json) -> usize {
    let Json::Object(m) = container else { return 0 };
    if m.is_empty() || !m.keys().all(|k| index_key(k).is_some_and(|i| i <= m.len())) {
        return 0;
    }
    // Distinct keys, each in 1..=len: exactly 1..=len.
    let saved = m.keys().map(|k| memory::string_size(k) + 1).sum();
    let mut items: Vec<(usize, Json)> = std::mem::take(m).into_iter().map(|(k, v)| (index_key(&k).unwrap_or(0), v)).collect();
    items.sort_by_key(|(i, _)| *i);
    *container = Json::Array(items.into_iter().map(|(_, v)| v).collect());
    saved
}

pub fn proxy_len(lua: &Lua, t: &Table) -> Answer {
    let handle = proxy_handle(t);
    let n = handle.as_deref().and_then(Handle::json).and_then(|h| {
        h.value().map(|j| match &*j {
            Json::Array(a) => a.len(),
            Json::Object(m) => object_border(m),
            _ => 0,
        })
    });
    let n = n.unwrap_or(0);
    ok(lua, n)
}

/// `pairs(proxy)`'s snapshot of the keys, taken when `pairs` is called (bootstrap.lua iterates it).
pub fn proxy_pairs(lua: &Lua, t: &Table) -> Answer {
    // The keys are copied out under the borrow and become Lua values after it.
    enum Keys {
        Names(Vec<String>),
        Count(usize),
    }
    let handle = proxy_handle(t);
    let keys = handle.as_deref().and_then(Handle::json).and_then(|h| {
        let here = h.value()?;
        Some(match &*here {
            Json::Object(m) => Keys::Names(m.keys().cloned().collect()),
            Json::Array(a) => Keys::Count(a.len()),
            _ => Keys::Count(0),
        })
    });
    let list = lua.create_table()?;
    match keys {
        Some(Keys::Names(names)) => {
            for (i, k) in names.iter().enumerate() {
                list.raw_set(i + 1, Value::String(lua.create_string(k)?))?;
            }
        }
        Some(Keys::Count(n)) => {
            for i in 1..=n {
                list.raw_set(i, Value::Integer(i as i64))?;
            }
        }
        None => {}
    }
    ok(lua, list)
}

/// `next(proxy, key)` as `next` gives it for the table the proxy shows: `true, key, value`
/// (`true` alone past the end), or `false` when `t` is no proxy (the caller uses Lua's own
/// `next`). Array keys are 1..n, object keys in their sorted order.
pub fn proxy_next(lua: &Lua, shims: &ProxyShims, t: &Table, key: &Value) -> Answer {
    let Some(handle) = proxy_handle(t) else { return ok(lua, false) };
    let Some(h) = handle.json() else { return ok(lua, false) };
    let next_key = match h.value().as_deref() {
        Some(Json::Array(a)) => {
            let after = match key {
                Value::Nil => Some(0),
                Value::Integer(i) if *i >= 1 => Some(*i as usize),
                Value::Number(n) if n.fract() == 0.0 && *n >= 1.0 => Some(*n as usize),
                _ => None,
            };
            match after {
                Some(i) if i < a.len() => Some(Value::Integer(i as i64 + 1)),
                Some(_) => None,
                None => return fail(lua, ErrorValueKind::Lua, format!("invalid key to 'next' for {}", h.describe(None))),
            }
        }
        Some(Json::Object(m)) => {
            // serde_json's map offers no range: the key after `key` is found by a walk from the
            // first (pairs, a snapshot of the keys, is the way over a big object).
            let found = match key {
                Value::Nil => m.keys().next(),
                other => {
                    let after = key_text(other);
                    m.keys().find(|k| k.as_str() > after.as_str())
                }
            };
            match found {
                Some(k) => Some(Value::String(lua.create_string(k)?)),
                None => None,
            }
        }
        _ => None,
    };
    let Some(k) = next_key else { return ok(lua, true) };
    let mut found = proxy_index(lua, shims, t, &k)?;
    // proxy_index answers `true, value`: keep the value after the key.
    let value = found.pop_back().unwrap_or(Value::Nil);
    ok(lua, (true, k, value))
}

/// The Lua type as messages name it: integers and floats told apart, mlua's wrapped errors
/// shown as the userdata they are to Lua.
pub fn lua_type(v: &Value) -> &'static str {
    match v {
        Value::Integer(_) => "integer",
        Value::Number(_) => "number",
        Value::Error(_) => "userdata",
        other => other.type_name(),
    }
}

/// The sequence part of a table: 1.. up to the first nil.
pub fn sequence(t: &Table) -> Vec<Value> {
    let mut out = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => out.push(v),
        }
    }
    out
}

/// A key or name argument as text, for messages and lookups: strings as they are, integers in
/// decimal, anything else by its type name.
pub fn key_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(i) => i.to_string(),
        other => other.type_name().to_string(),
    }
}

#[cfg(test)]
#[path = "values_tests.rs"]
mod tests;
