//! The sandbox and its limits: hostile blocks end in the right run error kind, and the next run
//! is unaffected.
mod common;
use common::*;
use runvil::RunErrorKind;
use std::rc::Rc;

fn main_block(lua: &str) -> String {
    prompt(&format!("## Main\n\n```lua\n{lua}\n```\n"))
}

#[test]
fn endless_loop_hits_the_instruction_budget() {
    let e = error(&main_block("while true do end"), "");
    assert_eq!(e.kind, RunErrorKind::Limit);
    assert_eq!(e.message, "instruction budget of 10000000 exceeded in section ## Main");
}

#[test]
fn pcall_cannot_swallow_the_budget() {
    let e = error(&main_block("while true do pcall(function() while true do end end) end"), "");
    assert_eq!(e.kind, RunErrorKind::Limit);
    let e = error(
        &main_block(
            "local n = 0\nwhile true do local ok = xpcall(function() while true do end end, function(m) return m end) n = n + 1 end",
        ),
        "",
    );
    assert_eq!(e.kind, RunErrorKind::Limit);
}

#[test]
fn memory_bomb_hits_the_ceiling() {
    let e = error(&main_block("local t = {}\nfor i = 1, 1e9 do t[i] = string.rep('x', 1000) .. i end"), "");
    assert_eq!(e.kind, RunErrorKind::Limit, "{e}");
    assert!(e.message.starts_with("memory ceiling of 67108864 bytes exceeded"), "{e}");
    let e = error(&main_block("local ok, m = pcall(string.rep, 'x', 1 << 30)\nreturn tostring(ok)"), "");
    assert_eq!(e.kind, RunErrorKind::Limit, "{e}");
}

#[test]
fn deep_recursion_is_a_lua_error() {
    let e = error(&main_block("local function f(n) return f(n + 1) + 1 end\nreturn f(1)"), "");
    assert!(matches!(e.kind, RunErrorKind::Lua | RunErrorKind::Limit), "{e}");
    let e = error(&main_block("local function f() local ok, err = pcall(f) error(err, 0) end\nf()"), "");
    assert!(matches!(e.kind, RunErrorKind::Lua | RunErrorKind::Limit), "{e}");
}

#[test]
fn host_limits_override_defaults() {
    let host = Rc::new(TestHost::default());
    let e = run_with(host, &main_block("for i = 1, 1e6 do end"), "", |o| o.limits.instructions = Some(50_000)).unwrap_err();
    assert_eq!(e.message, "instruction budget of 50000 exceeded in section ## Main");
}

#[test]
fn cancellation_stops_a_busy_block() {
    let host = Rc::new(TestHost::default());
    host.cancel_after_yields.set(Some(2));
    let e = run_with(host, &main_block("while true do end"), "", |o| o.limits.instructions = Some(u64::MAX)).unwrap_err();
    assert_eq!(e.kind, RunErrorKind::Cancelled);
}

#[test]
fn removed_globals_are_absent() {
    let names = [
        "io",
        "os",
        "debug",
        "package",
        "load",
        "dofile",
        "loadfile",
        "print",
        "rawget",
        "rawset",
        "rawequal",
        "rawlen",
        "collectgarbage",
        "coroutine",
        "require_lua",
    ];
    for name in names {
        assert_eq!(result(&main_block(&format!("return type(_G[{name:?}])")), ""), "nil", "{name}");
    }
    assert_eq!(result(&main_block("return type(string.dump)"), ""), "nil");
    for name in ["string", "table", "math", "utf8", "pcall", "xpcall", "json", "var", "sys", "log", "untrusted", "prompt", "ui"] {
        assert_ne!(result(&main_block(&format!("return type(_G[{name:?}])")), ""), "nil", "{name}");
    }
}

#[test]
fn sys_is_sealed() {
    let src = main_block("local ok, e = pcall(function() sys.id = 3 end)\nlocal ok2, e2 = pcall(function() return sys.bogus end)\nreturn e.kind .. '|' .. e.message .. '|' .. e2.message .. '|' .. getmetatable(sys)");
    assert_eq!(result(&src, ""), "lua|sys is sealed; cannot set 'id'|unknown sys field 'bogus'|sys is sealed");
}

#[test]
fn var_rejects_non_json_at_the_assignment() {
    let src = main_block("local ok, e = pcall(function() var.f = function() end end)\nreturn e.message");
    assert_eq!(result(&src, ""), "var holds JSON data only: cannot set var.f: a function is not JSON data");
    let src = main_block("var.row = { a = { b = 1 } }\nvar.row.a.c = 2\ntable.insert(var.list or {}, 1)\nvar.list = json.array()\ntable.insert(var.list, 'x')\nreturn json.encode(var.row) .. #var.list .. var.list[1]");
    assert_eq!(result(&src, ""), "{\"a\":{\"b\":1,\"c\":2}}1x");
}

#[test]
fn json_array_refuses_a_nil_argument_rather_than_drop_the_items_after_it() {
    let src = main_block("local ok, e = pcall(json.array, 1, nil, 3)\nreturn tostring(ok) .. '|' .. e.kind .. '|' .. e.message");
    assert_eq!(result(&src, ""), "false|lua|json.array: argument 2 is nil (an array cannot hold nil; json.null is JSON's null)");
    let src = main_block("return json.encode(json.array(1, json.null, 3)) .. json.encode(json.array())");
    assert_eq!(result(&src, ""), "[1,null,3][]");
}

#[test]
fn var_carries_across_sections_and_h1() {
    let src = prompt("```lua\nvar.n = 1\n```\n\n## A\n\n```lua\nvar.n = var.n + 1\n```\n\n## B\n\n```lua\nreturn var.n\n```\n");
    assert_eq!(result(&src, ""), "2");
}

#[test]
fn scalar_return_rule() {
    assert_eq!(result(&main_block("return 1.5"), ""), "1.5");
    assert_eq!(result(&main_block("return true"), ""), "true");
    assert_eq!(result(&main_block("return 42, 'ignored'"), ""), "42");
    let e = error(&main_block("return {}"), "");
    assert_eq!((e.kind, e.message.as_str()), (RunErrorKind::Lua, "cannot return a table as a result"));
    assert_eq!(run(&main_block("local x = 1"), "").unwrap(), None);
}

#[test]
fn next_run_is_unaffected_by_a_failed_one() {
    let _ = error(&main_block("while true do end"), "");
    assert_eq!(result(&main_block("return 'fine'"), ""), "fine");
}

#[test]
fn coroutine_stays_out_of_the_sandbox() {
    // The coroutine library is loaded for the Engine's suspending calls only.
    assert_eq!(result(&main_block("return type(coroutine)"), ""), "nil");
}

/// Engine globals whose code loads on first read (lua/parts/) behave as ordinary globals: a
/// block that assigns one before reading it keeps its own value, one that reads it gets the
/// Engine's, and a prompt-replaced base function does not reach the Engine's code.
#[test]
fn lazily_loaded_globals_behave_as_plain_globals() {
    let out = result(&main_block("tools = nil\ntasks = 7\nreturn tostring(tools) .. ' ' .. tostring(tasks) .. ' ' .. type(models)"), "");
    assert_eq!(out, "nil 7 table");
    let out = result(&main_block("local t = tools\ntools = 'mine'\nreturn type(t) .. ' ' .. tools .. ' ' .. type(packs)"), "");
    assert_eq!(out, "table mine table");
    // A block that breaks `type` and `tostring` before the tools part loads: the part was given
    // the originals, so its argument checks still answer precisely.
    let e = error(&main_block("type = nil\ntostring = nil\ntools.allow_tasks(5)"), "");
    assert_eq!(e.message, "tools.allow_tasks targets must be a list of section headings, got number");
}
