//! Build script: compiles the Engine's Lua code (`src/lua/bootstrap.lua`, `src/lua/parts/`) to
//! bytecode; on native targets writes the spec-case test list (`spec_cases.rs`, included by
//! `tests/spec_cases.rs`); and for wasm32-unknown-unknown,
//! where the Lua C VM needs a setjmp/longjmp runtime (wasm exception handling), builds that and
//! in-module WASI stubs so the final module imports nothing but wasm-bindgen glue.
use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=wasm-support");
    compile_engine_lua();
    if env::var("TARGET").as_deref() != Ok("wasm32-unknown-unknown") {
        // Only native builds run the tests; a wasm build does not rebuild when a case changes.
        spec_case_tests();
        return;
    }
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    // libsetjmp.a: lua-src links `-l static:-bundle=setjmp`.
    cc::Build::new()
        .file("wasm-support/wasm_sjlj_rt.c")
        .flag("-mllvm")
        .flag("-wasm-enable-eh")
        .flag("-mllvm")
        .flag("-wasm-enable-sjlj")
        .opt_level(2)
        .out_dir(&out)
        .compile("setjmp");
    cc::Build::new().file("wasm-support/wasi_stubs.c").opt_level(2).out_dir(&out).compile("wasi_stubs");
    println!("cargo:rustc-link-search=native={}", out.display());
    let wasi_lib = env::var("WASI_LIBDIR").unwrap_or_else(|_| "/usr/lib/wasm32-wasi".into());
    println!("cargo:rerun-if-env-changed=WASI_LIBDIR");
    println!("cargo:rustc-link-search=native={wasi_lib}");
    println!("cargo:rustc-link-lib=static:-bundle=c");
}

/// The Engine's Lua code (bootstrap.lua and lua/parts/*.lua) compiled at build time into stripped
/// Lua bytecode, for `include_bytes!` (`src/lua/chunks.rs`). Compiling it in the module instead
/// cost every engine's first run several milliseconds (docs/performance.md, "Start-up"): a
/// compiler VM, and the parser run over the bootstrap's source in code V8 had only just compiled. The
/// build uses the same Lua 5.5 (the build-produced copy that `[patch]` points every mlua at) natively; its
/// bytecode is the wasm build's bit for bit, because the dump format depends only on the sizes of
/// `int`, `Instruction`, `lua_Integer` and `lua_Number`, the same on both, and a mismatch would be
/// refused by the header check of every load (so every test would fail).
fn compile_engine_lua() {
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::create_dir_all(out.join("parts")).expect("create $OUT_DIR/parts");
    let mut files = vec![("src/lua/bootstrap.lua".to_string(), out.join("bootstrap.luac"))];
    println!("cargo:rerun-if-changed=src/lua/parts");
    for entry in std::fs::read_dir("src/lua/parts").expect("src/lua/parts") {
        let path = entry.expect("src/lua/parts entry").path();
        if let (Some(stem), Some("lua")) = (path.file_stem().and_then(|s| s.to_str()), path.extension().and_then(|s| s.to_str())) {
            files.push((path.display().to_string(), out.join("parts").join(format!("{stem}.luac"))));
        }
    }
    let lua = mlua::Lua::new_with(mlua::StdLib::NONE, mlua::LuaOptions::new()).expect("a native Lua state");
    for (source, target) in files {
        println!("cargo:rerun-if-changed={source}");
        let text = std::fs::read_to_string(&source).expect("read Engine Lua source");
        let function = lua.load(&text).set_name(format!("@{source}")).into_function().unwrap_or_else(|e| panic!("{source}: {e}"));
        // Stripped: no line information or local names, which the Engine's messages never show.
        std::fs::write(target, function.dump(true)).expect("write Engine Lua bytecode");
    }
}

/// One `#[test]` per spec case, so a failure names its case: `$OUT_DIR/spec_cases.rs` holds a
/// module per `spec-tests/*.cases` file (`s001_substitution`) with a test per `=== <name>` line
/// (`ask-once` becomes `ask_once`), each calling `run_named_case(file, name)`, and the list
/// `GENERATED_CASES` of every (file, name) pair. The cases themselves are read at test time;
/// only the names are needed here.
fn spec_case_tests() {
    println!("cargo:rerun-if-changed=spec-tests");
    let mut files: Vec<PathBuf> = std::fs::read_dir("spec-tests")
        .expect("spec-tests")
        .map(|e| e.expect("spec-tests entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "cases"))
        .collect();
    files.sort();
    let (mut code, mut list) = (String::new(), String::new());
    for path in &files {
        let file = path.file_name().unwrap().to_str().expect("UTF-8 file name");
        let text = std::fs::read_to_string(path).expect("a .cases file");
        let module = rust_name(&format!("s{}", file.trim_end_matches(".cases")));
        code += &format!("mod {module} {{\n    use super::run_named_case;\n");
        let mut seen = std::collections::HashMap::new();
        for (n, line) in text.split('\n').enumerate() {
            let Some(name) = line.strip_prefix("=== ").map(str::trim) else { continue };
            let test = rust_name(name);
            if let Some(other) = seen.insert(test.clone(), name) {
                panic!("{file}:{}: cases {other:?} and {name:?} both make the test name {test}", n + 1);
            }
            code += &format!("    #[test]\n    fn {test}() {{\n        run_named_case({file:?}, {name:?});\n    }}\n");
            list += &format!("    ({file:?}, {name:?}),\n");
        }
        code += "}\n";
    }
    code += &format!("const GENERATED_CASES: &[(&str, &str)] = &[\n{list}];\n");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("spec_cases.rs");
    std::fs::write(out, code).expect("write spec_cases.rs");
}

/// A case or file name as a Rust identifier: every character other than an ASCII letter or digit
/// becomes `_` (letters are lowercased); a leading digit gets a `_` prefixed, a keyword one appended.
fn rust_name(name: &str) -> String {
    let mut id: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    if id.is_empty() || id.starts_with(|c: char| c.is_ascii_digit()) {
        id.insert(0, '_');
    }
    const KEYWORDS: &[&str] = &[
        "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate", "do", "dyn", "else", "enum", "extern",
        "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override",
        "priv", "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof", "unsafe", "unsized",
        "use", "virtual", "where", "while", "yield",
    ];
    if KEYWORDS.contains(&id.as_str()) || id == "_" {
        id.push('_');
    }
    id
}
