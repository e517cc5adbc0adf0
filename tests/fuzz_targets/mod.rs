//! The fuzz targets, defined once. Two drivers feed them: the stable seeded mutation fuzzer
//! (`tests/fuzz.rs`, in every `cargo test`) and the cargo-fuzz (libFuzzer) targets in `fuzz/`,
//! which include this file and `tests/common/mod.rs` with `#[path]`. A target takes one input
//! text and panics when its property fails; anything else (a value, a run error) is a pass.
//!
//! Inputs that carry more than one text keep them in one string so both drivers (and a replayed
//! crash file) see the same bytes: `paths` splits the pattern from the path at the first `\n`,
//! `replies` splits model replies at [`REPLY_SEPARATOR`].
//!
//! The seed corpora are defined here too ([`seeds`]): the stable fuzzer mutates them, and
//! `fuzz/seed-corpora.sh` writes them out as libFuzzer's seed folders.
// Each cargo-fuzz binary uses one target and no seeds.
#![allow(dead_code)]
use crate::common::*;
use runvil::host::{PackSpec, ToolSpec};
use runvil::store::path::{check_path, parse_pattern};
use runvil::subst::{self, Global, Resolver};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The fuzz targets, by the name both drivers use.
pub const TARGETS: &[&str] = &["parser", "substitution", "paths", "lua_json", "replies"];

/// Between the model replies of one `replies` input (ASCII record separator).
pub const REPLY_SEPARATOR: char = '\u{1e}';

/// At most this many model replies per input (more would only repeat the loop's work).
const MAX_REPLIES: usize = 4;

/// Runs the target `name` on `input`.
pub fn run_target(name: &str, input: &str) {
    match name {
        "parser" => parser(input),
        "substitution" => substitution(input),
        "paths" => paths(input),
        "lua_json" => lua_json(input),
        "replies" => replies(input),
        _ => panic!("no fuzz target named {name}"),
    }
}

/// libFuzzer hands bytes; the engine takes text. Invalid UTF-8 is replaced rather than skipped,
/// so every input runs (the engine's own entry points all take `&str`).
pub fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// Target 1: the prompt parser (frontmatter and Markdown). Property: no panic.
pub fn parser(input: &str) {
    let _ = runvil::parse::parse_prompt(input);
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

/// Target 2: substitution (`{{ ... }}` placeholders) over fixed run values. Property: no panic.
pub fn substitution(input: &str) {
    let mut r = Fixed { argv: json!({ "files": [{ "path": "a.md" }], "1": "one" }), item: json!({ "name": "it" }) };
    let _ = subst::render(input, &mut r);
}

/// Target 3: store paths and glob patterns: `pattern\npath`. Property: no panic, and (through
/// the driver's time limit per input: libFuzzer's `-timeout`, the stable fuzzer's slow-input
/// report) no work that grows faster than the input.
pub fn paths(input: &str) {
    let (pattern, path) = input.split_once('\n').unwrap_or((input, input));
    let _ = check_path(path);
    if let Ok(p) = parse_pattern(pattern) {
        let _ = p.matches(path);
    }
}

/// The block behind `lua_json`: decode the input; whatever decodes re-encodes to a fixed point,
/// and `var` keeps it.
const LUA_JSON_BLOCK: &str = "local ok, v = pcall(json.decode, args)\n\
    if not ok then return 'refused' end\n\
    local s = json.encode(v)\n\
    local s2 = json.encode(json.decode(s))\n\
    if s ~= s2 then error('not a fixed point: ' .. s .. ' then ' .. s2) end\n\
    var.x = v\n\
    local s3 = json.encode(var.x)\n\
    if s3 ~= s then error('var changed it: ' .. s .. ' then ' .. s3) end\n\
    return 'same'";

/// Target 4: Lua <-> JSON (`json.decode`, `json.encode`, `var`) from Lua. Property: whatever
/// decodes re-encodes to a fixed point (floats included: `json.decode` reads back exactly what
/// `json.encode` wrote), and `var` keeps it; only the run's own limits may stop it.
pub fn lua_json(input: &str) {
    let source = prompt(&format!("## Main\n\n```lua\n{LUA_JSON_BLOCK}\n```\n"));
    match run(&source, input) {
        Ok(Some(r)) => assert!(r == "same" || r == "refused", "lua_json: {r} for {input:?}"),
        Ok(None) => panic!("lua_json: no result for {input:?}"),
        Err(e) => assert!(matches!(e.kind, runvil::RunErrorKind::Limit), "lua_json: {e} for {input:?}"),
    }
}

fn tool(name: &str, structured: bool) -> ToolSpec {
    ToolSpec { name: name.into(), description: "Fuzz.".into(), parameters: json!({"type": "object"}), trusted: false, structured }
}

const REPLIES_PROMPT: &str = "---\nname: t\ndescription: d\nrunvil: 0\nuses: [fz]\n---\n\n# T\n\n## Main\n\n```lua\nlocal ok, e = pcall(models.loop)\nreturn tostring(ok) .. ' ' .. tostring(e)\n```\n";

/// Target 5: model replies and tool arguments through the test host. The input is up to
/// [`MAX_REPLIES`] replies split at [`REPLY_SEPARATOR`]; a reply that parses as JSON is the reply
/// object, else it is the reply's content. Tool calls carry their arguments to a plain and a
/// structured tool (which echo them back). Property: no panic, the run ends.
pub fn replies(input: &str) {
    let h = Rc::new(TestHost::default());
    h.packs.borrow_mut().push(PackSpec {
        name: "fz".into(),
        description: "Fuzz tools.".into(),
        tools: vec![tool("plain", false), tool("shaped", true)],
        ..Default::default()
    });
    let mut script: Vec<Json> = input
        .split(REPLY_SEPARATOR)
        .take(MAX_REPLIES)
        .map(|r| serde_json::from_str(r).unwrap_or_else(|_| Json::String(r.to_string())))
        .collect();
    script.push(json!("final"));
    h.model("default", script);
    let _ = run_with(h, REPLIES_PROMPT, "", |o| o.limits.max_tool_iterations = Some(4));
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The repository root: `CARGO_MANIFEST_DIR` is the root for `tests/fuzz.rs` and `fuzz/` for the
/// cargo-fuzz crate.
fn repo() -> PathBuf {
    let here = root();
    if here.join("spec-tests").is_dir() {
        here
    } else {
        here.parent().map(Path::to_path_buf).unwrap_or(here)
    }
}

/// The prompts of the spec cases (`--- prompt` sections) and of every example.
fn prompt_corpus() -> Vec<String> {
    let mut out = Vec::new();
    for file in ["001-substitution.cases", "002-tools.cases", "004-store.cases"] {
        let text = std::fs::read_to_string(repo().join("spec-tests").join(file)).unwrap();
        for case in text.split("\n=== ").skip(1) {
            if let Some(start) = case.find("--- prompt\n") {
                let body = &case[start + "--- prompt\n".len()..];
                let end = ["\n--- result", "\n--- error", "\n--- store"].iter().filter_map(|m| body.find(m)).min().unwrap_or(body.len());
                out.push(format!("{}\n", &body[..end]));
            }
        }
    }
    out.extend(files_in("examples", "md"));
    assert!(out.len() > 100, "the spec cases give the corpus ({} prompts)", out.len());
    out
}

/// The text of every `*.ext` file in the repository folder `dir`, in name order.
fn files_in(dir: &str, ext: &str) -> Vec<String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
        .map(|entries| entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == ext)).collect())
        .unwrap_or_default();
    paths.sort();
    paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect()
}

/// The recorded provider exchanges: real-world JSON shapes.
fn provider_fixtures() -> Vec<String> {
    files_in("pkg-tests/fixtures/providers", "json")
}

#[rustfmt::skip]
const PATH_SEEDS: &[&str] = &[
    "notes/a.md", "a/b/c/d.txt", "**/*.md", "docs/**/x*y*z", "*", "**", "a/**/b/**/c", "CON.txt", "x./y", "a//b", "../up",
    "dir/", "**/", "é/ü.txt", "*a*a*a*a*a*a*b", "a?[b]", " lead", "trail ",
];

#[rustfmt::skip]
const JSON_SEEDS: &[&str] = &[
    r#"{"a":[1,2.5,-0,1e300,"x\u0000y",null,true,{"b":{}}],"c":"é😀"}"#, r#"[[[[[[[[]]]]]]]]"#, r#"{"1":1,"2":2,"3":3}"#,
    r#"[1,null,3]"#, r#""\ud83d\ude00 \\ \" \/""#, r#"9223372036854775807"#, r#"-9223372036854775808"#,
    r#"12345678901234567890123"#, r#"{"":"","a":{"a":{"a":[]}}}"#, r#"[-9.223372032337203e+85,5e-324,1.7976931348623157e308]"#,
    r#"[0.1,0.30000000000000004,2.2250738585072014e-308,2.225073858507201e-308,9007199254740993]"#,
];

/// The seed inputs of target `name`.
pub fn seeds(name: &str) -> Vec<String> {
    match name {
        "parser" => prompt_corpus(),
        "substitution" => {
            let mut out: Vec<String> = prompt_corpus().into_iter().filter(|p| p.contains("{{")).collect();
            out.extend(
                [
                    "{{ var.x.a[3].b }} {{ argv[1] }} {{ item.name }} {{ sys.id }} {{ g.k }} {{ f }} {{ args }}",
                    "\\{{ not }} {{ var['x'].s }} {{ var.list }} {{ nosuch }} {{ var.x.n }}",
                    "{{ argv.files[1].path }} {{ item }} {{ var.x.a }}",
                ]
                .map(String::from),
            );
            out
        }
        // Every seed as a pattern against a few others as paths.
        "paths" => PATH_SEEDS
            .iter()
            .enumerate()
            .flat_map(|(i, p)| (0..3).map(move |k| format!("{p}\n{}", PATH_SEEDS[(i + 1 + k * 5) % PATH_SEEDS.len()])))
            .collect(),
        "lua_json" => JSON_SEEDS.iter().map(|s| s.to_string()).chain(provider_fixtures()).collect(),
        "replies" => {
            let sep = REPLY_SEPARATOR.to_string();
            let one = [
                json!({ "content": "done", "finish_reason": "stop" }),
                json!({ "content": "", "finish_reason": "tool_calls", "tool_calls": [{ "id": "c1", "name": "fz_plain", "arguments": { "q": "x" } }] }),
                json!({ "content": "", "tool_calls": [{ "id": "c1", "name": "fz_shaped", "arguments": "{\"a\":[1,2]}" }, { "id": "c2", "name": "fz_plain", "arguments": {} }] }),
                json!({ "content": null, "reasoning_content": "hm", "tool_calls": [{ "id": "c", "name": "nosuch", "arguments": [] }] }),
                json!({ "content": "x", "finish_reason": "length", "model": "m", "usage": { "prompt_tokens": 1 } }),
            ]
            .map(|j| j.to_string());
            let mut out: Vec<String> = one.to_vec();
            out.push([one[1].as_str(), one[2].as_str(), one[0].as_str()].join(&sep));
            out.push([one[2].as_str(), one[3].as_str()].join(&sep));
            out.extend(provider_fixtures());
            out
        }
        _ => panic!("no fuzz target named {name}"),
    }
}
