//! `var` behaves as the Lua table it looks like: the same random operations run on a plain Lua
//! table and on a table inside `var` leave the same `#`, `ipairs`, `pairs`, `next`,
//! `table.concat` and JSON. The writes `var` refuses by design (a string key into a non-empty
//! array: JSON arrays hold no names) are checked to be refused with that message and skipped on
//! both tables.

mod common;
use common::*;
use proptest::prelude::*;

/// One operation on a table `t`, as Lua source. Indices are drawn relative to `#t`, so that
/// every operation is one a list or record is written with (never a hole: see language.md).
#[derive(Debug, Clone)]
enum Op {
    Append(i64),
    Insert(i64),
    InsertAt(u8, i64),
    Remove,
    RemoveAt(u8),
    Overwrite(u8, i64),
    PopByNil,
    SetKey(u8, i64),
    DelKey(u8),
    Sort,
}

impl Op {
    fn lua(&self) -> String {
        let key = |k: &u8| ["name", "id", "x", "zeta"][*k as usize % 4];
        match self {
            Op::Append(v) => format!("t[#t + 1] = {v}"),
            Op::Insert(v) => format!("table.insert(t, {v})"),
            Op::InsertAt(p, v) => format!("table.insert(t, {p} % (#t + 1) + 1, {v})"),
            Op::Remove => "table.remove(t)".into(),
            Op::RemoveAt(p) => format!("if #t > 0 then table.remove(t, {p} % #t + 1) end"),
            Op::Overwrite(p, v) => format!("if #t > 0 then t[{p} % #t + 1] = {v} end"),
            Op::PopByNil => "if #t > 0 then t[#t] = nil end".into(),
            Op::SetKey(k, v) => format!("t.{} = {v}", key(k)),
            Op::DelKey(k) => format!("t.{} = nil", key(k)),
            Op::Sort => "table.sort(t)".into(),
        }
    }
}

fn op() -> impl Strategy<Value = Op> {
    let v = -50i64..50;
    prop_oneof![
        3 => v.clone().prop_map(Op::Append),
        2 => v.clone().prop_map(Op::Insert),
        1 => (any::<u8>(), v.clone()).prop_map(|(p, v)| Op::InsertAt(p, v)),
        1 => Just(Op::Remove),
        1 => any::<u8>().prop_map(Op::RemoveAt),
        1 => (any::<u8>(), v.clone()).prop_map(|(p, v)| Op::Overwrite(p, v)),
        1 => Just(Op::PopByNil),
        1 => (any::<u8>(), v).prop_map(|(k, v)| Op::SetKey(k, v)),
        1 => any::<u8>().prop_map(Op::DelKey),
        1 => Just(Op::Sort),
    ]
}

/// The program: `snap` describes a table by everything Lua can ask of it; `step` applies one
/// operation to the `var` table, then (unless refused) to the plain one, and compares.
const HARNESS: &str = r#"
local function snap(t)
  local seq, keys, count = {}, {}, 0
  for _, v in ipairs(t) do seq[#seq + 1] = tostring(v) end
  for k in pairs(t) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  local k = next(t)
  while k ~= nil do count = count + 1; k = next(t, k) end
  local text = json.encode(t)
  -- An emptied array stays `[]` where a plain table is `{}`: both are the empty table.
  if text == '[]' then text = '{}' end
  return #t .. ' | ' .. table.concat(seq, ',') .. ' | ' .. table.concat(keys, ',') .. ' | '
    .. count .. ' | ' .. table.concat(t, ',') .. ' | ' .. text
end
local targets = {
  { name = 'var.a', plain = {}, get = function() return var.a end },
  { name = 'var.d.items', plain = {}, get = function() return var.d.items end },
}
var.a = {}
var.d = { items = {} }
local function step(n, source, op)
  for _, target in ipairs(targets) do
    local done, err = pcall(op, target.get())
    if done then
      op(target.plain)
    elseif not tostring(err):find('is an array: its keys are integers from 1', 1, true) then
      error('op ' .. n .. ' (' .. source .. ') on ' .. target.name .. ' failed: ' .. tostring(err))
    end
    local want, got = snap(target.plain), snap(target.get())
    if want ~= got then
      error('op ' .. n .. ' (' .. source .. ') on ' .. target.name .. ': plain ' .. want .. ' ~= var ' .. got)
    end
  end
end
"#;

fn program(ops: &[Op]) -> String {
    let mut body = String::from(HARNESS);
    for (n, op) in ops.iter().enumerate() {
        let source = op.lua();
        body.push_str(&format!("step({}, {:?}, function(t) {source} end)\n", n + 1, source));
    }
    body.push_str("return 'same'\n");
    prompt(&format!("```lua\n{body}```\n"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn var_tables_behave_as_plain_tables(ops in prop::collection::vec(op(), 1..40)) {
        match run(&program(&ops), "") {
            Ok(Some(text)) => prop_assert_eq!(text, "same"),
            other => prop_assert!(false, "{:?}", other),
        }
    }
}

/// The idioms a new user writes first, spelled out.
#[test]
fn appending_to_an_empty_var_table_builds_a_list() {
    let src = prompt(
        "```lua\nvar.l = {}\nfor i = 1, 3 do var.l[#var.l + 1] = i end\ntable.insert(var.l, 4)\n\
         var.d = { items = {} }\nvar.d.items[#var.d.items + 1] = 'x'\ntable.insert(var.d.items, 'y')\n\
         return json.encode({ l = var.l, d = var.d, n = #var.l, c = table.concat(var.l, ',') })\n```\n",
    );
    assert_eq!(result(&src, ""), r#"{"c":"1,2,3,4","d":{"items":["x","y"]},"l":[1,2,3,4],"n":4}"#);
}

#[test]
fn an_empty_array_takes_a_name_as_an_object() {
    let src = prompt("```lua\nvar.l = json.array()\nvar.l.name = 'n'\nreturn json.encode(var.l)\n```\n");
    assert_eq!(result(&src, ""), r#"{"name":"n"}"#);
}

#[test]
fn next_walks_var_tables() {
    let src = prompt(
        "```lua\nvar.o = { b = 2, a = 1 }\nvar.l = { 'x', 'y' }\nlocal out = {}\n\
         local k, v = next(var.o)\nwhile k do out[#out + 1] = k .. '=' .. v; k, v = next(var.o, k) end\n\
         for i, x in next, var.l do out[#out + 1] = i .. '=' .. x end\n\
         out[#out + 1] = tostring(next(var.l, 2))\nreturn table.concat(out, ' ')\n```\n",
    );
    assert_eq!(result(&src, ""), "a=1 b=2 1=x 2=y nil");
}

#[test]
fn a_block_s_own_next_stands() {
    let src = prompt("```lua\nnext = function() return 'mine' end\nvar.x = { 1 }\nreturn next(var.x)\n```\n");
    assert_eq!(result(&src, ""), "mine");
}
