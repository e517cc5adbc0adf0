//! Fuzzing that stays (issue 10, item 2): a deterministic, seeded mutation fuzzer on stable Rust,
//! no cargo-fuzz, no nightly. Each target mutates a corpus seeded from `spec-tests/` and
//! `examples/` and feeds the engine; every input must end in an outcome (a value or a run error),
//! never a panic or a hang. Inputs that take longer than `SLOW_MS` natively are reported as
//! super-linear suspects (printed, not asserted: the machine is noisy).
//!
//! `cargo test --test fuzz` runs a bounded number of inputs per target (CI); more by hand:
//! `RUNVIL_FUZZ_ITERS=20000 cargo test --release --test fuzz -- --nocapture`; another stream of
//! inputs: `RUNVIL_FUZZ_SEED=7`. A failing input is printed with its target, seed and iteration so
//! it can be replayed and turned into a regression test (see `regressions` at the end).
mod common;
use common::*;
use runvil::host::{PackSpec, ToolSpec};
use runvil::store::path::{check_path, parse_pattern};
use runvil::subst::{self, Global, Resolver};
use serde_json::{json, Value as Json};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Inputs slower than this (natively) are printed as super-linear suspects.
const SLOW_MS: u128 = 200;

/// A small, seeded generator (xorshift64*): the same seed gives the same inputs everywhere.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn seed() -> u64 {
    env_number("RUNVIL_FUZZ_SEED", 1)
}

/// Inputs per target: `default` unless RUNVIL_FUZZ_ITERS says otherwise.
fn iterations(default: u64) -> u64 {
    env_number("RUNVIL_FUZZ_ITERS", default)
}

/// Tokens that matter to the grammars under test, spliced in by the mutator.
#[rustfmt::skip]
const TOKENS: &[&str] = &[
    "{{", "}}", "{{ ", " }}", "\\{{", "\\", "{{ var.", "{{ sys.", "{{ argv.", "{{ args }}", "{{ item }}", "{{ prose }}", "[", "]",
    "{", "}", "\"", "'", ":", "- ", "* ", "1. ", "#", "# ", "## ", "### ", "\n", "\r\n", "\r", "\t", " ", "---\n", "```", "```lua\n",
    "\n```\n", "~~~", "    ", "> ", "<!--", "-->", "|", "*", "**", "/", "..", ".", "CON", "nul", "a", "é", "\u{202e}", "\u{0}",
    "\u{1}", "\u{feff}", "\u{fffd}", "😀", "0", "-1", "1e309", "9223372036854775808", "null", "true", "nan", "&", "*a", "!!str ",
    "? ", "%", "%s", "(.-)", ".-", "a*", "return ", "end", "local ", "var.x = ", "json.encode(", "tools.call(", "uses: [", "name: ",
];

/// One mutation of `input` (character-safe: the result is always valid UTF-8).
fn mutate(rng: &mut Rng, input: &str, corpus: &[String]) -> String {
    let chars: Vec<char> = input.chars().collect();
    let n = chars.len();
    let at = rng.below(n + 1);
    let mut out: Vec<char> = chars.clone();
    match rng.below(8) {
        // Insert a token.
        0 | 1 => {
            let t: Vec<char> = rng.pick(TOKENS).chars().collect();
            out.splice(at..at, t);
        }
        // Delete a range.
        2 => {
            let len = rng.below(16.min(n - at) + 1);
            out.drain(at..at + len);
        }
        // Repeat a range many times (finds work that grows faster than the input).
        3 => {
            let len = rng.below(8.min(n - at) + 1).max(1).min(n - at);
            if len > 0 {
                let piece: Vec<char> = chars[at..at + len].to_vec();
                let most = if rng.below(8) == 0 { 4000 } else { 40 };
                let times = 1 + rng.below(most);
                let rep: Vec<char> = piece.iter().copied().cycle().take(len * times).collect();
                out.splice(at..at, rep);
            }
        }
        // Replace a character with a random one (ASCII mostly, sometimes any scalar value).
        4 => {
            if at < n {
                let c = if rng.below(4) == 0 {
                    char::from_u32(rng.below(0x11_0000) as u32).unwrap_or('\u{fffd}')
                } else {
                    (rng.below(95) as u8 + 32) as char
                };
                out[at] = c;
            }
        }
        // Splice in a piece of another corpus entry.
        5 => {
            let other: Vec<char> = rng.pick(corpus).chars().collect();
            let from = rng.below(other.len() + 1);
            let len = rng.below(64.min(other.len() - from) + 1);
            out.splice(at..at, other[from..from + len].iter().copied());
        }
        // Truncate.
        6 => out.truncate(at),
        // Swap two ranges' order (move a line).
        _ => {
            if let Some(nl) = chars[at..].iter().position(|&c| c == '\n') {
                let line: Vec<char> = out.drain(at..at + nl + 1).collect();
                let to = rng.below(out.len() + 1);
                out.splice(to..to, line);
            }
        }
    }
    out.into_iter().collect()
}

/// 1 to 4 stacked mutations of a corpus entry.
fn next_input(rng: &mut Rng, corpus: &[String]) -> String {
    let mut s = rng.pick(corpus).clone();
    for _ in 0..1 + rng.below(4) {
        s = mutate(rng, &s, corpus);
    }
    s
}

fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The prompts of the spec cases (`--- prompt` sections) and the examples.
fn prompt_corpus() -> Vec<String> {
    let mut out = Vec::new();
    for file in ["001-substitution.cases", "002-tools.cases", "004-store.cases"] {
        let text = std::fs::read_to_string(root().join("spec-tests").join(file)).unwrap();
        for case in text.split("\n=== ").skip(1) {
            if let Some(start) = case.find("--- prompt\n") {
                let body = &case[start + "--- prompt\n".len()..];
                let end = ["\n--- result", "\n--- error", "\n--- store"].iter().filter_map(|m| body.find(m)).min().unwrap_or(body.len());
                out.push(format!("{}\n", &body[..end]));
            }
        }
    }
    for file in ["hello.md", "smoke.md"] {
        out.push(std::fs::read_to_string(root().join("examples").join(file)).unwrap());
    }
    assert!(out.len() > 100, "the spec cases give the corpus ({} prompts)", out.len());
    out
}

/// Runs `inputs` inputs of one target on its own thread, so a hang fails the test instead of
/// holding it: the thread reports each input before running it, and the safety bound (not a
/// performance claim) names the input that never ended.
fn campaign(name: &'static str, inputs: u64, body: impl FnOnce(&mut dyn FnMut(&str, &dyn Fn())) + Send + 'static) {
    let current = Arc::new(Mutex::new(String::new()));
    let seen = current.clone();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let started = Instant::now();
        let mut count = 0u64;
        let mut slow: Vec<(u128, String)> = Vec::new();
        let mut failure: Option<String> = None;
        let mut each = |input: &str, f: &dyn Fn()| {
            if failure.is_some() {
                return;
            }
            *seen.lock().unwrap() = input.to_string();
            let t0 = Instant::now();
            if catch_unwind(AssertUnwindSafe(f)).is_err() {
                failure = Some(format!("{name}: input {count} (seed {}) panicked: {input:?}", seed()));
            }
            let ms = t0.elapsed().as_millis();
            if ms > SLOW_MS {
                slow.push((ms, input.chars().take(300).collect()));
            }
            count += 1;
        };
        body(&mut each);
        let _ = tx.send((count, started.elapsed(), slow, failure));
    });
    let bound = Duration::from_secs(env_number("RUNVIL_FUZZ_SAFETY_S", 600));
    let (count, elapsed, slow, failure) =
        rx.recv_timeout(bound).unwrap_or_else(|_| panic!("{name}: an input did not end within {bound:?}: {:?}", current.lock().unwrap()));
    println!(
        "fuzz {name}: {count} inputs of {inputs} in {:.1} s ({:.0}/s), seed {}, {} slower than {SLOW_MS} ms",
        elapsed.as_secs_f64(),
        count as f64 / elapsed.as_secs_f64(),
        seed(),
        slow.len()
    );
    for (ms, input) in &slow {
        println!("  super-linear suspect ({ms} ms): {input:?}");
    }
    if let Some(f) = failure {
        panic!("{f}");
    }
}

/// Target 1: the prompt parser (frontmatter and Markdown).
#[test]
fn fuzz_prompt_parser() {
    let n = iterations(20000);
    campaign("parser", n, move |each| {
        let corpus = prompt_corpus();
        let mut rng = Rng::new(seed());
        for _ in 0..n {
            let input = next_input(&mut rng, &corpus);
            each(&input, &|| {
                let _ = runvil::parse::parse_prompt(&input);
            });
        }
    });
}

/// Substitution's view for the fuzzer: fixed values of every shape.
struct Fixed {
    argv: Json,
    item: Json,
}

impl Resolver for Fixed {
    fn args(&self) -> &str {
        "the args"
    }
    fn argv(&self) -> Option<&Json> {
        Some(&self.argv)
    }
    fn item(&self) -> Option<&Json> {
        Some(&self.item)
    }
    fn var_at(&self, path: &[&str]) -> Option<Json> {
        let var = json!({
            "x": { "a": [1, 2, { "b": "deep" }], "s": "text", "n": null },
            "list": ["a", "b"],
            "word": "w",
        });
        runvil::subst::walk(&var, path).cloned()
    }
    fn sys_field(&self, key: &str) -> Option<Json> {
        (key == "id").then(|| json!(3))
    }
    fn global(&mut self, name: &str) -> Global {
        match name {
            "g" => Global::Data(json!({ "k": 1.5 })),
            "f" => Global::NotData,
            _ => Global::Nil,
        }
    }
}

/// The prose of the substitution cases plus placeholders of every form.
fn prose_corpus() -> Vec<String> {
    let mut out: Vec<String> = prompt_corpus().into_iter().filter(|p| p.contains("{{")).collect();
    for p in [
        "{{ var.x.a[3].b }} {{ argv[1] }} {{ item.name }} {{ sys.id }} {{ g.k }} {{ f }} {{ args }}",
        "\\{{ not }} {{ var['x'].s }} {{ var.list }} {{ nosuch }} {{ var.x.n }}",
        "{{ argv.files[1].path }} {{ item }} {{ var.x.a }}",
    ] {
        out.push(p.to_string());
    }
    out
}

/// Target 2: substitution (`{{ ... }}` placeholders) over fixed run values.
#[test]
fn fuzz_substitution() {
    let n = iterations(80000);
    campaign("substitution", n, move |each| {
        let corpus = prose_corpus();
        let mut rng = Rng::new(seed());
        for _ in 0..n {
            let input = next_input(&mut rng, &corpus);
            each(&input, &|| {
                let mut r = Fixed { argv: json!({ "files": [{ "path": "a.md" }], "1": "one" }), item: json!({ "name": "it" }) };
                let _ = subst::render(&input, &mut r);
            });
        }
    });
}

/// Target 3: store paths and glob patterns (the path rules, pattern parsing, matching).
#[test]
fn fuzz_store_paths_and_globs() {
    let n = iterations(80000);
    campaign("paths", n, move |each| {
        let corpus: Vec<String> = [
            "notes/a.md",
            "a/b/c/d.txt",
            "**/*.md",
            "docs/**/x*y*z",
            "*",
            "**",
            "a/**/b/**/c",
            "CON.txt",
            "x./y",
            "a//b",
            "../up",
            "dir/",
            "**/",
            "é/ü.txt",
            "*a*a*a*a*a*a*b",
            "a?[b]",
            " lead",
            "trail ",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut rng = Rng::new(seed());
        for _ in 0..n {
            let pattern = next_input(&mut rng, &corpus);
            let path = next_input(&mut rng, &corpus);
            each(&format!("{pattern} ~ {path}"), &|| {
                let _ = check_path(&path);
                if let Ok(p) = parse_pattern(&pattern) {
                    let _ = p.matches(&path);
                }
            });
        }
    });
}

/// Target 4: Lua <-> JSON (json.decode, json.encode, var) from Lua. Property: whatever decodes
/// re-encodes to a fixed point.
#[test]
fn fuzz_lua_json() {
    let n = iterations(6000);
    campaign("lua-json", n, move |each| {
        let mut corpus: Vec<String> = [
            r#"{"a":[1,2.5,-0,1e300,"x\u0000y",null,true,{"b":{}}],"c":"é😀"}"#,
            r#"[[[[[[[[]]]]]]]]"#,
            r#"{"1":1,"2":2,"3":3}"#,
            r#"[1,null,3]"#,
            r#""\ud83d\ude00 \\ \" \/""#,
            r#"9223372036854775807"#,
            r#"-9223372036854775808"#,
            r#"12345678901234567890123"#,
            r#"{"":"","a":{"a":{"a":[]}}}"#,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for dir in ["pkg-tests/fixtures/providers"] {
            if let Ok(entries) = std::fs::read_dir(root().join(dir)) {
                for e in entries.flatten() {
                    if let Ok(text) = std::fs::read_to_string(e.path()) {
                        corpus.push(text);
                    }
                }
            }
        }
        let block = "local ok, v = pcall(json.decode, args)\n\
            if not ok then return 'refused' end\n\
            local s = json.encode(v)\n\
            local s2 = json.encode(json.decode(s))\n\
            if s ~= s2 and s:find('[%.eE]') then return 'float' end\n\
            if s ~= s2 then error('not a fixed point: ' .. s .. ' then ' .. s2) end\n\
            var.x = v\n\
            local s3 = json.encode(var.x)\n\
            if s3 ~= s then error('var changed it: ' .. s .. ' then ' .. s3) end\n\
            return 'same'";
        let source = prompt(&format!("## Main\n\n```lua\n{block}\n```\n"));
        let mut rng = Rng::new(seed());
        for _ in 0..n {
            let input = next_input(&mut rng, &corpus);
            each(&input, &|| match run(&source, &input) {
                // "float": a number that does not survive decode(encode(x)), the open finding
                // in `regressions` below; the rest of the property is still checked.
                Ok(Some(r)) => assert!(r == "same" || r == "refused" || r == "float", "{r}"),
                Ok(None) => panic!("no result"),
                // Only the run's own limits may stop it; a Lua error is the property failing.
                Err(e) => assert!(matches!(e.kind, runvil::RunErrorKind::Limit), "{e}"),
            });
        }
    });
}

fn tool(name: &str, structured: bool) -> ToolSpec {
    ToolSpec { name: name.into(), description: "Fuzz.".into(), parameters: json!({"type": "object"}), trusted: false, structured }
}

/// Target 5: model replies and tool arguments through the test host. A reply is mutated JSON
/// text: when it parses it is the reply object, else it is the reply's content. Tool calls carry
/// mutated arguments to a plain and a structured tool (which echo them back).
#[test]
fn fuzz_model_replies_and_tool_arguments() {
    let n = iterations(5000);
    campaign("replies", n, move |each| {
        let corpus: Vec<String> = [
            json!({ "content": "done", "finish_reason": "stop" }),
            json!({ "content": "", "finish_reason": "tool_calls", "tool_calls": [{ "id": "c1", "name": "fz_plain", "arguments": { "q": "x" } }] }),
            json!({ "content": "", "tool_calls": [{ "id": "c1", "name": "fz_shaped", "arguments": "{\"a\":[1,2]}" }, { "id": "c2", "name": "fz_plain", "arguments": {} }] }),
            json!({ "content": null, "reasoning_content": "hm", "tool_calls": [{ "id": "c", "name": "nosuch", "arguments": [] }] }),
            json!({ "content": "x", "finish_reason": "length", "model": "m", "usage": { "prompt_tokens": 1 } }),
        ]
        .iter()
        .map(|j| j.to_string())
        .collect();
        let source = "---\nname: t\ndescription: d\nrunvil: 0\nuses: [fz]\n---\n\n# T\n\n## Main\n\n```lua\nlocal ok, e = pcall(models.loop)\nreturn tostring(ok) .. ' ' .. tostring(e)\n```\n";
        let mut rng = Rng::new(seed());
        for _ in 0..n {
            let replies: Vec<String> = (0..1 + rng.below(3)).map(|_| next_input(&mut rng, &corpus)).collect();
            each(&replies.join("\n"), &|| {
                let h = Rc::new(TestHost::default());
                h.packs.borrow_mut().push(PackSpec {
                    name: "fz".into(),
                    description: "Fuzz tools.".into(),
                    tools: vec![tool("plain", false), tool("shaped", true)],
                    ..Default::default()
                });
                let mut script: Vec<Json> =
                    replies.iter().map(|r| serde_json::from_str(r).unwrap_or_else(|_| Json::String(r.clone()))).collect();
                script.push(json!("final"));
                h.model("default", script);
                let _ = run_with(h, source, "", |o| o.limits.max_tool_iterations = Some(4));
            });
        }
    });
}

/// Findings of the fuzzer, kept as regression tests (docs/reliability.md, "Fuzzing").
mod regressions {
    use super::*;

    /// lua-json, seed 1, input 1267: json.decode is not exact for every float. serde_json without
    /// its `float_roundtrip` feature parses some decimals one unit in the last place off, so
    /// `json.encode(json.decode(s))` changes a number json.encode itself wrote. Open: the feature
    /// fixes it, at a wasm size cost not yet measured against the size line (docs/reliability.md).
    #[test]
    #[ignore = "open finding: serde_json float parsing is not round-trip exact (float_roundtrip)"]
    fn json_decode_reads_back_every_float_json_encode_writes() {
        let block = "local s = json.encode(json.decode(args))\nreturn s .. ' ' .. json.encode(json.decode(s))";
        let out = result(&prompt(&format!("## Main\n\n```lua\n{block}\n```\n")), "-9.223372032337203e+85");
        assert_eq!(out, "-9.223372032337203e+85 -9.223372032337203e+85");
    }
}
