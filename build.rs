//! Build script: only does work for wasm32-unknown-unknown, where the Lua C VM needs a
//! setjmp/longjmp runtime (wasm exception handling) and in-module WASI stubs so the final
//! module imports nothing but wasm-bindgen glue.
use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=wasm-support");
    minify_bootstrap();
    if env::var("TARGET").as_deref() != Ok("wasm32-unknown-unknown") {
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

/// bootstrap.lua without its comments and indentation, for `include_str!`: the source is kept
/// readable in the repository, and the module (450 KB gzip budget) carries only the code. The
/// file has no long strings, so dropping `--` lines and leading spaces cannot change its meaning.
fn minify_bootstrap() {
    println!("cargo:rerun-if-changed=src/lua/bootstrap.lua");
    let source = std::fs::read_to_string("src/lua/bootstrap.lua").expect("src/lua/bootstrap.lua");
    let code: Vec<&str> = source.lines().map(str::trim_start).filter(|l| !l.is_empty() && !l.starts_with("--")).collect();
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("bootstrap.min.lua");
    std::fs::write(out, code.join("\n")).expect("write bootstrap.min.lua");
}
