//! `cargo bench --bench entry`: what one section entry costs natively, against a bare Lua 5.5
//! state (the same libraries opened, nothing else) created in the same process with interleaved
//! samples. The goal for an entry is at most 2x the bare state (docs/performance.md). The wasm figures come from
//! `node bench/entries.mjs`; this native bench is for profiling (`perf record` on it).

mod common;
use common::InstantHost;
use mlua::{Lua, LuaOptions, StdLib};
use runvil::RunOptions;
use std::rc::Rc;
use std::time::Instant;

const SECTIONS: usize = 200;
const SAMPLES: usize = 9;

/// `SECTIONS` sections, each one block that falls through (`local x = 1`), so the walk enters
/// every one of them and each entry's own work is next to nothing.
fn prompt() -> String {
    let mut s = String::from("# Entries\n");
    for k in 1..=SECTIONS {
        s.push_str(&format!("\n## S{k}\n\n```lua\nlocal x = {k}\n```\n"));
    }
    s
}

/// Microseconds per section entry for one run of the prompt.
fn entry_us(src: &str) -> f64 {
    let start = Instant::now();
    let result = futures::executor::block_on(runvil::run(src, RunOptions::default(), Rc::new(InstantHost)));
    assert!(result.is_ok(), "the benchmark prompt runs");
    start.elapsed().as_secs_f64() * 1e6 / (SECTIONS + 1) as f64
}

/// Microseconds per arm of a `SECTIONS`-arm fanout whose arms each ask the (instant) model once:
/// what an arm costs beyond its entry (profile it with `ENTRY_BENCH_ONCE=fanout`).
fn fanout_us() -> f64 {
    let src = format!(
        "# F\n\n## Main\n\n```lua\nlocal c = {{}}\nfor i = 1, {SECTIONS} do c[i] = i end\nreturn #tasks.fanout('### W', c)\n```\n\n### W\n\n```lua\nreturn models.infer('x')\n```\n"
    );
    let start = Instant::now();
    let result = futures::executor::block_on(runvil::run(&src, RunOptions::default(), Rc::new(InstantHost)));
    assert_eq!(result.ok().flatten().as_deref(), Some(SECTIONS.to_string().as_str()), "the fanout runs");
    start.elapsed().as_secs_f64() * 1e6 / SECTIONS as f64
}

/// Microseconds per bare state: the libraries an entry opens, and a trivial chunk run in it.
fn bare_us() -> f64 {
    let libs = StdLib::STRING | StdLib::TABLE | StdLib::MATH | StdLib::UTF8 | StdLib::COROUTINE;
    let start = Instant::now();
    for k in 0..SECTIONS {
        let lua = Lua::new_with(libs, LuaOptions::new()).expect("a bare state");
        lua.load(format!("local x = {k}")).exec().expect("runs");
    }
    start.elapsed().as_secs_f64() * 1e6 / SECTIONS as f64
}

/// Microseconds per bare state made through Lua's C API alone (`luaL_newstate`, the same
/// libraries, load and run the chunk, `lua_close`): what wasmoon's side of bench/entries.mjs does.
/// An mlua state (`bare_us`) adds mlua's own setup (its internal metatables, each field set in a
/// protected call) and a full collection when its first handle drops; the wasm ratio is against
/// this kind of state, so `ENTRY_BENCH_ONCE=bare-c` shows the same natively.
fn bare_c_us() -> f64 {
    use mlua::ffi;
    let libs: [(&std::ffi::CStr, ffi::lua_CFunction); 6] = [
        (c"_G", ffi::luaopen_base),
        (c"string", ffi::luaopen_string),
        (c"table", ffi::luaopen_table),
        (c"math", ffi::luaopen_math),
        (c"utf8", ffi::luaopen_utf8),
        (c"coroutine", ffi::luaopen_coroutine),
    ];
    let start = Instant::now();
    for k in 0..SECTIONS {
        let chunk = std::ffi::CString::new(format!("local x = {k}")).expect("no NUL");
        // SAFETY: a state of our own, used on this thread only and closed before the next.
        unsafe {
            let l = ffi::luaL_newstate();
            assert!(!l.is_null(), "a bare state");
            for (name, open) in libs {
                ffi::luaL_requiref(l, name.as_ptr(), open, 1);
                ffi::lua_settop(l, 0);
            }
            assert!(ffi::luaL_loadstring(l, chunk.as_ptr()) == 0 && ffi::lua_pcall(l, 0, 0, 0) == 0, "runs");
            ffi::lua_close(l);
        }
    }
    start.elapsed().as_secs_f64() * 1e6 / SECTIONS as f64
}

fn stats(mut xs: Vec<f64>) -> (f64, f64, f64) {
    xs.sort_by(f64::total_cmp);
    (xs[0], xs[xs.len() / 2], xs[xs.len() - 1])
}

fn main() {
    let src = prompt();
    // `ENTRY_BENCH_ONCE=entry` (or `bare`, `bare-c`, `fanout`) runs one sample of one side only: for instruction
    // counts under `valgrind --tool=callgrind`, which the noise of a shared machine does not move.
    match std::env::var("ENTRY_BENCH_ONCE").as_deref() {
        Ok("entry") => return println!("{:.1} µs per entry", entry_us(&src)),
        Ok("bare") => return println!("{:.1} µs per bare state", bare_us()),
        Ok("bare-c") => return println!("{:.1} µs per bare state (C API)", bare_c_us()),
        Ok("fanout") => return println!("{:.1} µs per fanout arm", fanout_us()),
        _ => {}
    }
    let (mut entries, mut bares) = (Vec::new(), Vec::new());
    entry_us(&src); // warm-up
    bare_us();
    for i in 0..SAMPLES {
        // Interleaved, alternating which goes first.
        if i % 2 == 0 {
            entries.push(entry_us(&src));
            bares.push(bare_us());
        } else {
            bares.push(bare_us());
            entries.push(entry_us(&src));
        }
    }
    let ratio = stats(entries.iter().zip(&bares).map(|(e, b)| e / b).collect());
    let (e, b) = (stats(entries), stats(bares));
    println!("section entry (native), {SAMPLES} interleaved samples, min / median / max µs");
    println!("  runvil entry   {:8.1} {:8.1} {:8.1}", e.0, e.1, e.2);
    println!("  bare Lua state {:8.1} {:8.1} {:8.1}", b.0, b.1, b.2);
    println!("  ratio          {:8.2} {:8.2} {:8.2}", ratio.0, ratio.1, ratio.2);
}
