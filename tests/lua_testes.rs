//! The official Lua 5.5.1 test suite (`tests/lua-testes/`, the release's `testes/` files) run
//! inside Runvil's sandbox: each file is one block of a prompt, run by `runvil::run` in a section
//! VM with the Engine's globals, its pcall/xpcall/setmetatable/tostring wrappers, the work
//! budget and the memory ceiling. The test-only `lua-testes` feature keeps six base functions
//! the sandbox otherwise removes (`load`, `rawget`, `rawset`, `rawequal`, `rawlen`,
//! `collectgarbage`); everything else a file needs and the sandbox lacks is patched in the
//! vendored copy, each change listed in `tests/lua-testes/PATCHES.md`.
//!
//! Run: `cargo test --features lua-testes --test lua_testes` (`./build.sh test` does).
mod common;
use common::*;
use runvil::LimitOverrides;
use std::rc::Rc;

/// The harness block run before each file, in the same VM: what `all.lua` sets up before it
/// runs the files (PATCHES.md, "The harness").
const HARNESS: &str = r#"
print = function() end
_soft, _port, _nomsg = true, true, true
Message = function() end
os = { clock = function() return 0 end }
package = { loaded = { _G = _G, string = string, table = table, math = math, utf8 = utf8 }, preload = {} }
package.loaded.package = package
package.preload.debug = function()
  return setmetatable({}, { __index = function(_, k) error("the sandbox has no debug." .. tostring(k), 2) end })
end
require = function(name)
  local lib = package.loaded[name]
  if lib ~= nil then return lib end
  local loader = package.preload[name]
  if loader == nil then error("the sandbox has no library '" .. tostring(name) .. "'", 2) end
  lib = loader(name)
  if lib == nil then lib = true end
  package.loaded[name] = lib
  return lib
end
"#;

/// Vendored modules a file `require`s: each becomes a `package.preload` function in a block
/// of its own, between the harness and the file.
const MODULES: &[(&str, &str)] = &[("bitwise.lua", "bwcoercion")];

/// Runs one vendored file to its end; the file's own `return` value (several return a number
/// `all.lua` checks) is the run's result, `done` when it returns nothing.
fn run_file(name: &str) -> Result<String, String> {
    let path = format!("{}/tests/lua-testes/{name}", env!("CARGO_MANIFEST_DIR"));
    let code = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(!code.contains("\n````"), "{name}: a line starting with four backticks would close the fence");
    let mut modules = String::new();
    for (_, module) in MODULES.iter().filter(|(file, _)| *file == name) {
        let path = format!("{}/tests/lua-testes/{module}.lua", env!("CARGO_MANIFEST_DIR"));
        let code = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        modules += &format!("````lua\npackage.preload[{module:?}] = function(...)\n{code}\nend\n````\n\n");
    }
    let head = format!(
        "---\nname: testes\ndescription: the Lua test suite\nrunvil: 0\n---\n\n# Lua testes\n\n## {name}\n\n```lua\n{HARNESS}\n```\n\n{modules}````lua\n"
    );
    // Lua's messages give prompt lines: the file's line is that less `offset`.
    let offset = head.matches('\n').count();
    let source = format!("{head}{code}\n````\n\n```lua\nreturn 'done'\n```\n");
    let outcome = run_with(Rc::new(TestHost::default()), &source, "", |o| {
        o.limits = LimitOverrides { instructions: Some(20_000_000_000), memory_bytes: Some(512 << 20), ..Default::default() };
    });
    match outcome {
        Ok(Some(text)) => Ok(text),
        Ok(None) => Err("the run returned no result".into()),
        Err(e) => Err(format!("{:?}: {} (file line = prompt line - {offset})", e.kind, e.message)),
    }
}

macro_rules! testes {
    ($($test:ident: $file:literal => $expect:literal;)*) => {
        const RUN: &[&str] = &[$($file),*];
        $(
            #[test]
            fn $test() {
                assert_eq!(run_file($file), Ok($expect.to_string()));
            }
        )*
    };
}

testes! {
    bitwise: "bitwise.lua" => "done";
    calls: "calls.lua" => "function";
    closure: "closure.lua" => "done";
    constructs: "constructs.lua" => "done";
    errors: "errors.lua" => "done";
    events: "events.lua" => "12";
    goto_: "goto.lua" => "done";
    heavy: "heavy.lua" => "done";
    literals: "literals.lua" => "done";
    locals: "locals.lua" => "5";
    math: "math.lua" => "done";
    nextvar: "nextvar.lua" => "done";
    pm: "pm.lua" => "done";
    sort: "sort.lua" => "done";
    strings: "strings.lua" => "done";
    tpack: "tpack.lua" => "done";
    utf8: "utf8.lua" => "done";
    vararg: "vararg.lua" => "done";
}

/// Every vendored file is run (bwcoercion.lua is the module bitwise.lua requires): a file added
/// without a test, or a test whose file is gone, fails here.
#[test]
fn every_vendored_file_is_run() {
    let dir = format!("{}/tests/lua-testes", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|f| f.ends_with(".lua") && f != "bwcoercion.lua")
        .collect();
    files.sort();
    assert_eq!(files, RUN);
}
