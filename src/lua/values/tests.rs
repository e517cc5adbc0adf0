//! Round-trip properties of the JSON <-> Lua conversions and of `var` writes.

use mlua::{Lua, LuaOptions, MultiValue, StdLib, Table, Value};
use serde_json::{Map, Value as Json};
use std::cell::RefCell;
use std::rc::Rc;

use super::convert::{to_json, to_lua, NotJson};
use super::json_handle::{apply_write, write_delta, Access, JsonHandle, Step};
use super::proxy::{make_proxy, proxy_index, proxy_newindex};
use crate::effects::memory::json_size;
use crate::lua::env::{Marks, ProxyShims};
use proptest::prelude::*;

fn bare() -> (Lua, Marks) {
    let lua = Lua::new_with(StdLib::STRING | StdLib::TABLE | StdLib::MATH | StdLib::UTF8, LuaOptions::new()).unwrap();
    let marks = Marks::new(&lua).unwrap();
    (lua, marks)
}

fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        // Floats with integral values must stay floats.
        (-1_000_000i64..1_000_000).prop_map(|i| i as f64),
        Just(0.0),
        Just(-0.0),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[a-z]{1,3}", "[0-9]{1,2}", Just(String::new())]
}

/// JSON as Lua can hold it: integers in i64, finite floats, any unicode.
fn json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(Json::from),
        finite().prop_map(Json::from),
        any::<String>().prop_map(Json::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            prop::collection::btree_map(key(), inner, 0..6).prop_map(|m| Json::Object(m.into_iter().collect())),
        ]
    })
}

/// Plain Lua data: scalars, non-empty sequences, and string-keyed tables.
#[derive(Debug, Clone)]
enum Plain {
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    Seq(Vec<Plain>),
    Map(Vec<(String, Plain)>),
}

fn plain() -> impl Strategy<Value = Plain> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(Plain::Int),
        finite().prop_map(Plain::Float),
        any::<String>().prop_map(Plain::Str),
        any::<bool>().prop_map(Plain::Bool),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..5).prop_map(Plain::Seq),
            prop::collection::btree_map(key(), inner, 0..5).prop_map(|m| Plain::Map(m.into_iter().collect())),
        ]
    })
}

fn build(lua: &Lua, p: &Plain) -> Value {
    match p {
        Plain::Int(i) => Value::Integer(*i),
        Plain::Float(f) => Value::Number(*f),
        Plain::Str(s) => Value::String(lua.create_string(s).unwrap()),
        Plain::Bool(b) => Value::Boolean(*b),
        Plain::Seq(items) => Value::Table(lua.create_sequence_from(items.iter().map(|i| build(lua, i))).unwrap()),
        Plain::Map(members) => {
            let t = lua.create_table().unwrap();
            for (k, v) in members {
                t.raw_set(k.as_str(), build(lua, v)).unwrap();
            }
            Value::Table(t)
        }
    }
}

/// Deep equality of Lua data: same types (integer and float told apart), same keys, same values.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Integer(x), Value::Integer(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => x == y,
        (Value::String(x), Value::String(y)) => x.as_bytes() == y.as_bytes(),
        (Value::Boolean(x), Value::Boolean(y)) => x == y,
        (Value::Table(x), Value::Table(y)) => {
            let count = |t: &Table| t.pairs::<Value, Value>().count();
            count(x) == count(y)
                && x.pairs::<Value, Value>().all(|pair| {
                    let (k, v) = pair.unwrap();
                    same(&v, &y.raw_get::<Value>(k).unwrap())
                })
        }
        _ => false,
    }
}

fn noop_shims(lua: &Lua) -> ProxyShims {
    let f = lua.create_function(|_, ()| Ok(())).unwrap();
    ProxyShims { index: f.clone(), newindex: f.clone(), len: f.clone(), pairs: f }
}

fn second(mv: MultiValue) -> Value {
    let mut v = mv.into_iter();
    assert_eq!(v.next(), Some(Value::Boolean(true)), "the call answered false");
    v.next().unwrap_or(Value::Nil)
}

proptest! {
    #[test]
    fn json_survives_lua(j in json()) {
        let (lua, marks) = bare();
        let v = to_lua(&lua, &j, &marks).unwrap();
        prop_assert_eq!(to_json(&v, &marks), Ok(j));
    }

    #[test]
    fn plain_tables_survive_json(p in plain()) {
        let (lua, marks) = bare();
        let v = build(&lua, &p);
        let j = to_json(&v, &marks).unwrap();
        let back = to_lua(&lua, &j, &marks).unwrap();
        prop_assert!(same(&v, &back), "{:?} came back as {:?}", p, to_json(&back, &marks));
    }

    #[test]
    fn json_survives_a_var_write_and_read(j in json()) {
        let (lua, marks) = bare();
        let root = Rc::new(RefCell::new(Json::Object(Map::new())));
        let var = make_proxy(&lua, &noop_shims(&lua), JsonHandle { root: root.clone(), path: Vec::new(), access: Access::Var }).unwrap();
        let key = Value::String(lua.create_string("x").unwrap());
        second(proxy_newindex(&lua, &marks, &var, &key, &to_lua(&lua, &j, &marks).unwrap()).unwrap());
        // null is json.null, which var stores as null.
        let stored = root.borrow().get("x").cloned();
        prop_assert_eq!(stored, Some(j.clone()));
        let read = second(proxy_index(&lua, &noop_shims(&lua), &var, &key).unwrap());
        prop_assert_eq!(to_json(&read, &marks), Ok(j));
    }

    /// The size changes `var` writes charge add up to the size of what var holds.
    #[test]
    fn write_deltas_track_the_serialized_size(
        ops in prop::collection::vec((any::<bool>(), "[a-c]", 1usize..6, prop::option::weighted(0.7, json())), 0..40)
    ) {
        let mut var = serde_json::json!({ "list": [] });
        let mut held = json_size(&var) as i64;
        for (on_list, k, i, new) in ops {
            let (container, step) = if on_list {
                (var.get_mut("list").unwrap(), Step::Index(i))
            } else if k == "a" {
                // Never replace the list itself with something else in this test.
                continue;
            } else {
                (&mut var, Step::Key(k))
            };
            if let Ok(delta) = write_delta(container, &step, new.as_ref(), "var.x") {
                apply_write(container, step, new);
                held += delta;
            }
            prop_assert_eq!(held, serde_json::to_string(&var).unwrap().len() as i64);
        }
    }
}

#[test]
fn not_finite_numbers_are_not_json() {
    let (lua, marks) = bare();
    for n in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(to_json(&Value::Number(n), &marks), Err(NotJson::NotFinite));
        let t = lua.create_table().unwrap();
        t.raw_set("deep", lua.create_sequence_from([Value::Integer(1), Value::Number(n)]).unwrap()).unwrap();
        assert_eq!(to_json(&Value::Table(t), &marks), Err(NotJson::NotFinite));
    }
    assert_eq!(NotJson::NotFinite.describe(), "NaN and infinities are not JSON data");
}

#[test]
fn empty_containers_keep_their_kind() {
    let (lua, marks) = bare();
    for j in [serde_json::json!([]), serde_json::json!({}), serde_json::json!({ "a": [], "b": {}, "c": [[], {}] })] {
        assert_eq!(to_json(&to_lua(&lua, &j, &marks).unwrap(), &marks), Ok(j));
    }
}

/// JSON integers above i64::MAX have no Lua integer: they become floats (the nearest double).
#[test]
fn integers_beyond_i64_become_floats() {
    let (lua, marks) = bare();
    let j = Json::from(u64::MAX);
    let v = to_lua(&lua, &j, &marks).unwrap();
    assert_eq!(v, Value::Number(u64::MAX as f64));
    assert_eq!(to_json(&v, &marks), Ok(Json::from(u64::MAX as f64)));
}
