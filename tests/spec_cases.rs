//! Runs the language chapters' worked examples from `spec-tests/*.cases` (format in
//! `spec-tests/README.md`) against the native engine, checking what the JS runner
//! (`pkg-tests/spec.test.mjs`) checks, the same way. Every case runs natively, as its own test:
//! `build.rs` writes one `#[test]` per `=== <name>` line (module `s002_tools`, test `ask_once` for
//! `002-tools.cases`'s `ask-once`), so a failure names its case, and libtest's filter picks cases:
//! `cargo test --test spec_cases ask_once` (a substring of the snake_case name; `s002_tools::` for
//! a whole file).
//!
//! A `pending: <feature>` case must currently fail with the "is not available in this version of
//! Runvil" error, so it flips loudly once its feature lands. The cases of a file whose preamble
//! says `status: target` run and report a failure on stderr without failing.
//!
//! Cases that seed the store, make it read-only or check the final files (`file:`, `file-bytes:`,
//! `read-only:`, `--- files`) run against a host-supplied memory store (`runvil::store::MemoryBackend`);
//! the others run on the run's default store. `model:` roles are scripted models (as the package's
//! `scriptedModel`), `pack:` lines Packs served by the test host (`common::case_packs`, the reference
//! Packs included), and `ui:` the run's ui (kind `server`, not interactive, unless the line says
//! otherwise: the JS runner's defaults under Node). Model requests and run events are recorded
//! for `--- requests`, `--- events` and `--- events-absent`; `<NONCE>` stands for the envelope
//! nonce of a run with seed 42.

mod common;

use common::case_packs::{self, with_nonce};
use common::Outcome;
use runvil::engine::Ui;
use serde_json::Value as Json;
use std::fs;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::OnceLock;

const UNAVAILABLE: &str = "is not available in this version of Runvil";
const SEED: u64 = 42;

#[derive(Debug, Clone, PartialEq)]
enum Expect {
    Result(String),
    ResultNone,
    Error { kind: String, message: String },
    ErrorContains { kind: String, lines: Vec<String> },
}

#[derive(Debug, Clone)]
struct Case {
    file: String,
    line: usize,
    name: String,
    args: String,
    pending: Option<String>,
    prompt: String,
    expect: Expect,
    /// Files the host store holds when the run starts (`file:` / `file-bytes:`).
    files: Vec<(String, Vec<u8>)>,
    read_only: bool,
    /// The exact store listing after the run (`--- files`), sorted by path.
    expect_files: Option<Vec<(String, Vec<u8>)>>,
    /// `model:` lines: each role with its replies (a JSON array).
    models: Vec<(String, Json)>,
    /// `pack:` lines, in order.
    packs: Vec<Json>,
    /// The `ui:` line.
    ui: Option<Json>,
    expect_requests: Option<Vec<Json>>,
    expect_events: Option<Vec<Json>>,
    absent_events: Option<Vec<Json>>,
    /// The file's preamble says `status: target`: a failure is reported, not fatal.
    target: bool,
}

impl Case {
    /// Whether the case needs a host-supplied store rather than the run's default one.
    fn needs_store(&self) -> bool {
        !self.files.is_empty() || self.read_only || self.expect_files.is_some()
    }
}

/// `<path> = <value>`: the path is everything before the first ` = `.
fn split_entry<'a>(line: &'a str, what: &str) -> Result<(&'a str, &'a str), String> {
    line.split_once(" = ").ok_or_else(|| format!("{what}: expected `<path> = <value>`, got {line:?}"))
}

fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let digits: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if !digits.len().is_multiple_of(2) {
        return Err(format!("odd number of hex digits in {text:?}"));
    }
    (0..digits.len()).step_by(2).map(|i| u8::from_str_radix(&digits[i..i + 2], 16).map_err(|e| format!("bad hex {text:?}: {e}"))).collect()
}

fn parse_json_text(text: &str) -> Result<Vec<u8>, String> {
    serde_json::from_str::<String>(text).map(String::into_bytes).map_err(|e| format!("bad JSON string {text:?}: {e}"))
}

/// A `--- files` line: `<path> = <JSON string literal>` or `<path> = bytes: <hex>`.
fn parse_file_line(line: &str) -> Result<(String, Vec<u8>), String> {
    let (path, value) = split_entry(line, "--- files")?;
    let data = match value.strip_prefix("bytes: ") {
        Some(hex) => parse_hex(hex)?,
        None => parse_json_text(value)?,
    };
    Ok((path.to_string(), data))
}

fn parse_cases(file: &str, text: &str) -> Result<Vec<Case>, String> {
    let lines: Vec<&str> = text.split('\n').collect();
    // A trailing newline at the end of the file does not belong to the last block.
    let lines: &[&str] = match lines.last() {
        Some(&"") => &lines[..lines.len() - 1],
        _ => &lines[..],
    };
    let mut cases = Vec::new();
    let mut i = 0;
    // Anything before the first `=== ` line is a free-form preamble.
    while i < lines.len() && !lines[i].starts_with("=== ") {
        i += 1;
    }
    let target = lines[..i].iter().any(|l| l.trim() == "status: target");
    while i < lines.len() {
        let start = i + 1;
        let name = lines[i]["=== ".len()..].trim().to_string();
        if name.is_empty() {
            return Err(format!("{file}:{start}: empty case name"));
        }
        i += 1;
        let mut args = String::new();
        let mut pending = None;
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        let mut read_only = false;
        let mut models: Vec<(String, Json)> = Vec::new();
        let mut packs = Vec::new();
        let mut ui = None;
        // Header lines up to `--- prompt`.
        loop {
            let Some(line) = lines.get(i) else {
                return Err(format!("{file}:{start}: case {name}: no `--- prompt` line"));
            };
            i += 1;
            if *line == "--- prompt" {
                break;
            } else if let Some(rest) = line.strip_prefix("args: ") {
                args = rest.to_string();
            } else if let Some(rest) = line.strip_prefix("args-json: ") {
                args = serde_json::from_str::<String>(rest).map_err(|e| format!("{file}:{i}: case {name}: bad args-json: {e}"))?;
            } else if let Some(rest) = line.strip_prefix("pending: ") {
                pending = Some(rest.trim().to_string());
            } else if let Some(rest) = line.strip_prefix("file: ") {
                let (path, value) = split_entry(rest, "file:").map_err(|e| format!("{file}:{i}: case {name}: {e}"))?;
                let data = parse_json_text(value).map_err(|e| format!("{file}:{i}: case {name}: file: {e}"))?;
                files.push((path.to_string(), data));
            } else if let Some(rest) = line.strip_prefix("file-bytes: ") {
                let (path, value) = split_entry(rest, "file-bytes:").map_err(|e| format!("{file}:{i}: case {name}: {e}"))?;
                let data = parse_hex(value).map_err(|e| format!("{file}:{i}: case {name}: file-bytes: {e}"))?;
                files.push((path.to_string(), data));
            } else if let Some(rest) = line.strip_prefix("read-only: ") {
                read_only = match rest.trim() {
                    "true" => true,
                    "false" => false,
                    other => return Err(format!("{file}:{i}: case {name}: read-only: expected true or false, got {other:?}")),
                };
            } else if let Some(rest) = line.strip_prefix("model: ") {
                let (role, replies) =
                    rest.split_once(" = ").ok_or_else(|| format!("{file}:{i}: case {name}: model: expected `<role> = <JSON array>`"))?;
                let replies: Json = serde_json::from_str(replies).map_err(|e| format!("{file}:{i}: case {name}: model: {e}"))?;
                if !replies.is_array() {
                    return Err(format!("{file}:{i}: case {name}: model: the replies must be a JSON array"));
                }
                let role = role.trim().to_string();
                if models.iter().any(|(r, _)| *r == role) {
                    return Err(format!("{file}:{i}: case {name}: model: role {role} is scripted twice"));
                }
                models.push((role, replies));
            } else if let Some(rest) = line.strip_prefix("pack: ") {
                packs.push(serde_json::from_str(rest).map_err(|e| format!("{file}:{i}: case {name}: pack: {e}"))?);
            } else if let Some(rest) = line.strip_prefix("ui: ") {
                ui = Some(serde_json::from_str(rest).map_err(|e| format!("{file}:{i}: case {name}: ui: {e}"))?);
            } else if line.starts_with('#') || line.trim().is_empty() {
            } else {
                return Err(format!("{file}:{i}: case {name}: unknown header line {line:?}"));
            }
        }
        // The prompt, up to the expectation marker.
        let prompt_start = i;
        while i < lines.len() && !is_expect_marker(lines[i]) {
            if lines[i].starts_with("=== ") {
                return Err(format!("{file}:{start}: case {name}: no expectation (`--- result`, `--- error ...`)"));
            }
            i += 1;
        }
        if i >= lines.len() {
            return Err(format!("{file}:{start}: case {name}: no expectation (`--- result`, `--- error ...`)"));
        }
        let prompt = format!("{}\n", lines[prompt_start..i].join("\n"));
        let marker = lines[i];
        i += 1;
        let body_start = i;
        while i < lines.len() && !lines[i].starts_with("=== ") && !is_trailer(lines[i]) {
            i += 1;
        }
        let body = &lines[body_start..i];
        // `--- files`, `--- requests`, `--- events`, `--- events-absent`: any order, each at most once.
        let mut expect_files = None;
        let (mut expect_requests, mut expect_events, mut absent_events) = (None, None, None);
        while i < lines.len() && is_trailer(lines[i]) {
            let section = lines[i];
            let at = i + 1;
            i += 1;
            let start = i;
            while i < lines.len() && !lines[i].starts_with("=== ") && !is_trailer(lines[i]) {
                i += 1;
            }
            let slot = match section {
                "--- requests" => &mut expect_requests,
                "--- events" => &mut expect_events,
                "--- events-absent" => &mut absent_events,
                _ => {
                    if expect_files.is_some() {
                        return Err(format!("{file}:{at}: case {name}: `--- files` appears twice"));
                    }
                    let mut listing: Vec<(String, Vec<u8>)> = Vec::new();
                    for (k, line) in lines[start..i].iter().enumerate().filter(|(_, l)| !l.is_empty()) {
                        let entry = parse_file_line(line).map_err(|e| format!("{file}:{}: case {name}: {e}", start + k + 1))?;
                        if listing.last().is_some_and(|(last, _)| last.as_str() >= entry.0.as_str()) {
                            return Err(format!(
                                "{file}:{}: case {name}: `--- files` must be sorted by path, without repeats",
                                start + k + 1
                            ));
                        }
                        listing.push(entry);
                    }
                    expect_files = Some(listing);
                    continue;
                }
            };
            if slot.is_some() {
                return Err(format!("{file}:{at}: case {name}: `{section}` appears twice"));
            }
            let items = lines[start..i].iter().filter(|l| !l.trim().is_empty()).map(|l| match serde_json::from_str::<Json>(l) {
                Ok(v @ Json::Object(_)) => Ok(v),
                _ => Err(format!("{file}:{at}: case {name}: {section}: each line must be a JSON object, got {l}")),
            });
            *slot = Some(items.collect::<Result<Vec<_>, _>>()?);
        }
        let expect = if marker == "--- result" {
            Expect::Result(body.join("\n"))
        } else if marker == "--- result-none" {
            if body.iter().any(|l| !l.trim().is_empty()) {
                return Err(format!("{file}:{start}: case {name}: text after `--- result-none`"));
            }
            Expect::ResultNone
        } else if let Some(kind) = marker.strip_prefix("--- error-contains ") {
            let lines: Vec<String> = body.iter().map(|l| l.to_string()).filter(|l| !l.is_empty()).collect();
            if lines.is_empty() {
                return Err(format!("{file}:{start}: case {name}: `--- error-contains` with no text"));
            }
            Expect::ErrorContains { kind: kind.trim().to_string(), lines }
        } else if let Some(kind) = marker.strip_prefix("--- error ") {
            Expect::Error { kind: kind.trim().to_string(), message: body.join("\n") }
        } else {
            unreachable!()
        };
        let mut seen = std::collections::HashSet::new();
        if let Some((path, _)) = files.iter().find(|(p, _)| !seen.insert(p.clone())) {
            return Err(format!("{file}:{start}: case {name}: file {path:?} is seeded twice"));
        }
        cases.push(Case {
            file: file.to_string(),
            line: start,
            name,
            args,
            pending,
            prompt,
            expect,
            files,
            read_only,
            expect_files,
            models,
            packs,
            ui,
            expect_requests,
            expect_events,
            absent_events,
            target,
        });
    }
    Ok(cases)
}

fn is_trailer(line: &str) -> bool {
    matches!(line, "--- files" | "--- requests" | "--- events" | "--- events-absent")
}

fn is_expect_marker(line: &str) -> bool {
    line == "--- result" || line == "--- result-none" || line.starts_with("--- error ") || line.starts_with("--- error-contains ")
}

fn case_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("spec-tests");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cases"))
        .collect();
    files.sort();
    files
}

/// Every case of every file, parsed once per test binary.
fn all_cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let mut cases = Vec::new();
        for path in case_files() {
            let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let file = path.file_name().unwrap().to_string_lossy().to_string();
            cases.append(&mut parse_cases(&file, &text).unwrap_or_else(|e| panic!("{e}")));
        }
        cases
    })
}

/// The untrusted envelope's nonce in a run with [`SEED`] (it depends only on the seed), learnt as
/// the JS runner learns it: from `return untrusted("")`.
fn nonce() -> &'static str {
    static NONCE: OnceLock<String> = OnceLock::new();
    NONCE.get_or_init(|| {
        let probe = common::run("# N\n\n## Main\n\n```lua\nreturn untrusted(\"\")\n```\n", "");
        let text = probe.ok().flatten().unwrap_or_default();
        text.split("untrusted_input_")
            .nth(1)
            .map(|rest| rest.chars().take_while(char::is_ascii_hexdigit).collect::<String>())
            .filter(|hex| hex.len() == 32)
            .unwrap_or_else(|| "<NONCE unavailable>".to_string())
    })
}

fn describe(outcome: &Outcome) -> String {
    match outcome {
        Ok(Some(text)) => format!("result {text:?}"),
        Ok(None) => "no result".to_string(),
        Err(e) => format!("error {} {:?}", e.kind.as_str(), e.message),
    }
}

fn describe_expect(expect: &Expect) -> String {
    match expect {
        Expect::Result(text) => format!("result {text:?}"),
        Expect::ResultNone => "no result".to_string(),
        Expect::Error { kind, message } => format!("error {kind} {message:?}"),
        Expect::ErrorContains { kind, lines } => format!("error {kind} containing {lines:?}"),
    }
}

/// The expectation with `<NONCE>` replaced.
fn expect_with_nonce(expect: &Expect, nonce: &str) -> Expect {
    let n = |s: &String| s.replace("<NONCE>", nonce);
    match expect {
        Expect::Result(text) => Expect::Result(n(text)),
        Expect::ResultNone => Expect::ResultNone,
        Expect::Error { kind, message } => Expect::Error { kind: n(kind), message: n(message) },
        Expect::ErrorContains { kind, lines } => Expect::ErrorContains { kind: n(kind), lines: lines.iter().map(n).collect() },
    }
}

/// None when the outcome matches, else a description of what was wrong.
fn check(case: &Case, outcome: &Outcome) -> Option<String> {
    if let Some(feature) = &case.pending {
        return match outcome {
            Err(e) if e.message.contains(UNAVAILABLE) => None,
            _ => Some(format!(
                "pending ({feature}) case should fail with {UNAVAILABLE:?} until its feature lands; \
                 if the feature is built, remove the `pending:` line. expected once built: {}",
                describe_expect(&case.expect)
            )),
        };
    }
    let expect = expect_with_nonce(&case.expect, nonce());
    let ok = match (&expect, outcome) {
        (Expect::Result(want), Ok(Some(got))) => want == got,
        (Expect::ResultNone, Ok(None)) => true,
        (Expect::Error { kind, message }, Err(e)) => e.kind.as_str() == kind && &e.message == message,
        (Expect::ErrorContains { kind, lines }, Err(e)) => e.kind.as_str() == kind && lines.iter().all(|l| e.message.contains(l.as_str())),
        _ => false,
    };
    if ok {
        None
    } else {
        Some(format!("expected {}\n     got {}", describe_expect(&expect), describe(outcome)))
    }
}

fn show_file(path: &str, data: &[u8]) -> String {
    match std::str::from_utf8(data) {
        Ok(text) => format!("{path} = {}", serde_json::to_string(text).unwrap()),
        Err(_) => format!("{path} = bytes: {}", data.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")),
    }
}

/// None when the store after the run holds exactly the expected files.
fn check_files(case: &Case, got: &[(String, Vec<u8>)]) -> Option<String> {
    let want = case.expect_files.as_ref()?;
    if want.as_slice() == got {
        return None;
    }
    let show =
        |files: &[(String, Vec<u8>)]| files.iter().map(|(p, d)| format!("       {}", show_file(p, d))).collect::<Vec<_>>().join("\n");
    Some(format!("store after the run differs\n     expected files:\n{}\n     got files:\n{}", show(want), show(got)))
}

fn show(value: Option<&Json>) -> String {
    value.map_or_else(|| "undefined".to_string(), Json::to_string)
}

/// The README's subset match (the JS runner's `mismatch`): `got` is `None` for an absent field.
/// Every field `want` names must match; arrays match element by element with equal lengths;
/// `null` matches null or absent; `{"$contains": s}` a string holding s; `{"$absent": true}` only
/// an absent field; a string where an object is found matches the object's `name`. None when it
/// matches, else a complaint naming the path.
fn mismatch(want: &Json, got: Option<&Json>, path: &str) -> Option<String> {
    match (want, got) {
        (Json::Null, None | Some(Json::Null)) => None,
        (Json::Null, _) => Some(format!("{path}: want null/absent, got {}", show(got))),
        (Json::Array(want), Some(Json::Array(got))) => {
            if want.len() != got.len() {
                return Some(format!("{path}: want {} entries, got {}: {}", want.len(), got.len(), Json::from(got.clone())));
            }
            want.iter().zip(got).enumerate().find_map(|(k, (w, g))| mismatch(w, Some(g), &format!("{path}[{k}]")))
        }
        (Json::Array(_), _) => Some(format!("{path}: want an array, got {}", show(got))),
        (Json::Object(w), _) if w.contains_key("$contains") => {
            let part = w["$contains"].as_str().unwrap_or_default();
            match got {
                Some(Json::String(s)) if s.contains(part) => None,
                _ => Some(format!("{path}: want a string containing {}, got {}", w["$contains"], show(got))),
            }
        }
        (Json::Object(w), _) if w.contains_key("$absent") => got.map(|g| format!("{path}: want no field, got {g}")),
        (Json::Object(w), Some(Json::Object(g))) => w.iter().find_map(|(k, v)| mismatch(v, g.get(k), &format!("{path}.{k}"))),
        (Json::Object(_), _) => Some(format!("{path}: want an object, got {}", show(got))),
        (Json::String(name), Some(Json::Object(g))) => {
            (g.get("name") != Some(want)).then(|| format!("{path}: want name {}, got {}", Json::from(name.as_str()), show(got)))
        }
        (Json::Number(w), Some(Json::Number(g))) if w.as_f64() == g.as_f64() => None,
        (_, Some(g)) if g == want => None,
        _ => Some(format!("{path}: want {want}, got {}", show(got))),
    }
}

/// The `--- requests`, `--- events` and `--- events-absent` checks, as the JS runner makes them.
fn check_trace(case: &Case, requests: &[Json], events: &[Json]) -> Vec<String> {
    let mut problems = Vec::new();
    let nonce = nonce();
    if let Some(want) = &case.expect_requests {
        if want.len() != requests.len() {
            problems.push(format!("model requests: want {}, got {}: {}", want.len(), requests.len(), Json::from(requests.to_vec())));
        } else {
            let found = want
                .iter()
                .zip(requests)
                .enumerate()
                .find_map(|(k, (w, r))| mismatch(&with_nonce(w, nonce), Some(r), &format!("request {}", k + 1)));
            problems.extend(found);
        }
    }
    if let Some(want) = &case.expect_events {
        let mut at = 0;
        for (k, w) in want.iter().enumerate() {
            let w = with_nonce(w, nonce);
            while at < events.len() && mismatch(&w, Some(&events[at]), "").is_some() {
                at += 1;
            }
            if at >= events.len() {
                let types: Vec<&Json> = events.iter().map(|e| e.get("type").or(e.get("event")).unwrap_or(&Json::Null)).collect();
                problems.push(format!(
                    "event {} {w} not found in order; events: {}",
                    k + 1,
                    Json::from(types.into_iter().cloned().collect::<Vec<_>>())
                ));
                break;
            }
            at += 1;
        }
    }
    for w in case.absent_events.iter().flatten() {
        let w = with_nonce(w, nonce);
        if let Some(hit) = events.iter().find(|e| mismatch(&w, Some(e), "").is_none()) {
            problems.push(format!("an event matches {w}: {hit}"));
        }
    }
    problems
}

/// What a case's run left behind.
struct Ran {
    outcome: Outcome,
    /// The store's files after the run, when the case runs on a host store.
    files: Option<Vec<(String, Vec<u8>)>>,
    requests: Vec<Json>,
    events: Vec<Json>,
}

/// Runs the case on a test host with its models, Packs, ui and store.
fn run_case(case: &Case) -> Result<Ran, String> {
    let host = Rc::new(common::TestHost::default());
    for (role, replies) in &case.models {
        let replies = with_nonce(replies, nonce()).as_array().cloned().unwrap_or_default();
        // `scriptedModel` refuses any other reply up front.
        if let Some(k) = replies.iter().position(|r| !r.is_string() && !r.is_object()) {
            return Err(format!("scriptedModel: reply {k} must be a string or a reply object"));
        }
        host.model(role, replies);
    }
    for pack in &case.packs {
        case_packs::add_pack(&host, pack, nonce())?;
    }
    // The JS wrapper's ui under Node, `{ kind: 'server', interactive: false, ...ui }`.
    let field = |k: &str| case.ui.as_ref().and_then(|u| u.get(k));
    let ui = Ui {
        kind: field("kind").and_then(Json::as_str).unwrap_or("server").to_string(),
        interactive: field("interactive").and_then(Json::as_bool).unwrap_or(false),
    };
    let backend = case.needs_store().then(|| Rc::new(runvil::store::MemoryBackend::new(case.files.clone(), case.read_only)));
    let store = backend.clone().map(|b| b as Rc<dyn runvil::store::Backend>);
    let outcome = common::run_with(host.clone(), &case.prompt, &case.args, |options| {
        options.seed = SEED;
        options.ui = ui;
        options.store = store;
    });
    let requests = host.requests.borrow().clone();
    let events = host.events.borrow().clone();
    Ok(Ran { outcome, files: backend.map(|b| b.snapshot()), requests, events })
}

/// Runs one case and panics with everything that did not match (a `status: target` case only
/// reports it).
fn run_named_case(file: &str, name: &str) {
    let case = all_cases()
        .iter()
        .find(|c| c.file == file && c.name == name)
        .unwrap_or_else(|| panic!("no case {name} in spec-tests/{file}: rebuild so build.rs sees the file"));
    let problems = match run_case(case) {
        Err(e) => vec![format!("cannot build the case's host: {e}")],
        Ok(ran) => {
            let mut problems: Vec<String> = check(case, &ran.outcome).into_iter().collect();
            if case.pending.is_none() {
                problems.extend(ran.files.as_deref().and_then(|files| check_files(case, files)));
                problems.extend(check_trace(case, &ran.requests, &ran.events));
            }
            problems
        }
    };
    if problems.is_empty() {
        return;
    }
    let report = format!("{name} ({file}:{})\n     {}", case.line, problems.join("\n     "));
    if case.target {
        eprintln!("status: target case fails (not fatal): {report}");
        return;
    }
    panic!("{report}");
}

// One `#[test]` per case, and `GENERATED_CASES` (see build.rs, `spec_case_tests`).
include!(concat!(env!("OUT_DIR"), "/spec_cases.rs"));

#[test]
fn every_case_has_a_test_and_a_unique_name() {
    let mut seen = std::collections::HashSet::new();
    for c in all_cases() {
        assert!(seen.insert(c.name.as_str()), "duplicate case name {} ({}:{})", c.name, c.file, c.line);
    }
    let parsed: Vec<(&str, &str)> = all_cases().iter().map(|c| (c.file.as_str(), c.name.as_str())).collect();
    assert_eq!(parsed, GENERATED_CASES, "the generated tests are out of date: rebuild");
    assert!(!parsed.is_empty(), "no spec cases found");
}

#[test]
fn reference_packs_match_js() {
    let js = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("js/packs/reference.js")).expect("js/packs/reference.js");
    let runner = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("pkg-tests/spec.test.mjs")).expect("spec.test.mjs");
    for text in case_packs::REFERENCE_TEXTS {
        assert!(
            js.contains(text) || runner.contains(text),
            "js/packs/reference.js no longer holds {text:?}: update tests/common/case_packs.rs"
        );
    }
}

#[test]
fn subset_match_follows_the_readme() {
    use serde_json::json;
    let ok = |w: Json, g: Json| mismatch(&w, Some(&g), "").is_none();
    assert!(ok(json!({}), json!({"type": "x"})));
    assert!(ok(json!({"a": null}), json!({})));
    assert!(ok(json!({"a": null}), json!({"a": null})));
    assert!(!ok(json!({"a": null}), json!({"a": 1})));
    assert!(ok(json!({"tools": ["web_search"]}), json!({"tools": [{"name": "web_search", "x": 1}]})));
    assert!(!ok(json!({"tools": ["a"]}), json!({"tools": [{"name": "a"}, {"name": "b"}]})));
    assert!(ok(json!({"m": {"$contains": "ell"}}), json!({"m": "hello"})));
    assert!(!ok(json!({"m": {"$contains": "x"}}), json!({"m": 5})));
    assert!(ok(json!({"m": {"$absent": true}}), json!({})));
    assert!(!ok(json!({"m": {"$absent": true}}), json!({"m": null})));
    assert!(ok(json!({"n": 1}), json!({"n": 1.0})));
    assert!(!ok(json!({"n": "1"}), json!({"n": 1})));
}

#[test]
fn parser_reads_every_form() {
    let text = "preamble\n=== a\nargs: x y \n--- prompt\np\n--- result\nline1\nline2\n\
                === b\nargs-json: \" s \"\npending: call\n--- prompt\nq\n--- result-none\n\
                === c\n--- prompt\nr\n--- error Lua\nm\n=== d\n--- prompt\ns\n--- error-contains Parse\nx\ny\n";
    let cases = parse_cases("t", text).unwrap();
    assert_eq!(cases.len(), 4);
    assert_eq!(cases[0].args, "x y ");
    assert_eq!(cases[0].prompt, "p\n");
    assert_eq!(cases[0].expect, Expect::Result("line1\nline2".into()));
    assert_eq!(cases[1].args, " s ");
    assert_eq!(cases[1].pending.as_deref(), Some("call"));
    assert_eq!(cases[1].expect, Expect::ResultNone);
    assert_eq!(cases[2].expect, Expect::Error { kind: "Lua".into(), message: "m".into() });
    assert_eq!(cases[3].expect, Expect::ErrorContains { kind: "Parse".into(), lines: vec!["x".into(), "y".into()] });
    assert!(cases.iter().all(|c| !c.needs_store()));
}

#[test]
fn parser_reads_store_lines() {
    let text = "=== a\n# a comment\nfile: notes/a.txt = \"x = y\\n\"\nfile-bytes: bad.bin = ff fe 00\nread-only: true\n\
                --- prompt\np\n--- result\nr1\nr2\n--- files\nbad.bin = bytes: fffe00\nnotes/a.txt = \"x = y\\n\"\n\
                === b\n--- prompt\nq\n--- error-contains Vfs\nm\n--- files\n\
                === c\n--- prompt\ns\n--- result-none\n";
    let cases = parse_cases("t", text).unwrap();
    assert_eq!(cases.len(), 3);
    assert_eq!(cases[0].files, vec![("notes/a.txt".to_string(), b"x = y\n".to_vec()), ("bad.bin".to_string(), vec![0xff, 0xfe, 0x00])]);
    assert!(cases[0].read_only);
    assert_eq!(cases[0].expect, Expect::Result("r1\nr2".into()));
    assert_eq!(
        cases[0].expect_files,
        Some(vec![("bad.bin".to_string(), vec![0xff, 0xfe, 0x00]), ("notes/a.txt".to_string(), b"x = y\n".to_vec())])
    );
    assert_eq!(cases[1].expect, Expect::ErrorContains { kind: "Vfs".into(), lines: vec!["m".into()] });
    assert_eq!(cases[1].expect_files, Some(vec![]));
    assert!(cases[1].needs_store() && !cases[1].read_only);
    assert!(!cases[2].needs_store());
    // An unsorted listing is refused.
    assert!(parse_cases("t", "=== d\n--- prompt\np\n--- result\nr\n--- files\nb = \"\"\na = \"\"\n").is_err());
}

#[test]
fn parser_reads_host_lines_and_trace_sections() {
    let text = "=== a\nmodel: writer = [\"hi\", {\"content\": \"\"}]\npack: {\"name\": \"p\"}\npack: {\"ref\": \"web\"}\n\
                ui: {\"interactive\": true}\n--- prompt\np\n--- result\nr\n--- events\n{\"type\": \"x\"}\n\n--- files\n\
                --- requests\n{}\n{\"tools\": null}\n--- events-absent\n{\"type\": \"y\"}\n=== b\n--- prompt\nq\n--- result-none\n";
    let cases = parse_cases("t", text).unwrap();
    let a = &cases[0];
    assert_eq!(a.models, vec![("writer".to_string(), serde_json::json!(["hi", {"content": ""}]))]);
    assert_eq!(a.packs.len(), 2);
    assert_eq!(a.ui, Some(serde_json::json!({"interactive": true})));
    assert_eq!(a.expect, Expect::Result("r".into()));
    assert_eq!(a.expect_events, Some(vec![serde_json::json!({"type": "x"})]));
    assert_eq!(a.expect_requests.as_ref().map(Vec::len), Some(2));
    assert_eq!(a.absent_events, Some(vec![serde_json::json!({"type": "y"})]));
    assert_eq!(a.expect_files, Some(vec![]));
    assert!(cases[1].expect_requests.is_none() && cases[1].models.is_empty());
    // A section twice, a role scripted twice, and a trace line that is not an object are refused.
    assert!(parse_cases("t", "=== d\n--- prompt\np\n--- result\nr\n--- events\n--- events\n").is_err());
    assert!(parse_cases("t", "=== d\nmodel: w = []\nmodel: w = []\n--- prompt\np\n--- result\nr\n").is_err());
    assert!(parse_cases("t", "=== d\n--- prompt\np\n--- result\nr\n--- requests\n[1]\n").is_err());
}

#[test]
fn js_stringify_writes_what_json_stringify_writes() {
    use case_packs::js_stringify;
    use serde_json::json;
    assert_eq!(
        js_stringify(&json!({"b": 1, "a": [1.0, 2.5, null], "10": true, "9": "x\n"})),
        r#"{"9":"x\n","10":true,"a":[1,2.5,null],"b":1}"#
    );
    assert_eq!(js_stringify(&json!("é<>")), r#""é<>""#);
}
