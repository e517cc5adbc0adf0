//! Runs the language chapters' worked examples from `spec-tests/*.cases` (format in
//! `spec-tests/README.md`) against the native engine. Every mismatch is collected and reported
//! together. A `pending: <feature>` case must currently fail with the "is not available in this
//! version of Runvil" error, so it flips loudly once its feature lands.
//!
//! `SPEC_CASE=<substring>` runs only the cases whose name contains the substring.
//!
//! Cases that seed the store, make it read-only or check the final files (`file:`, `file-bytes:`,
//! `read-only:`, `--- files`) run against a host-supplied memory store (`common::run_with_store`);
//! the others run exactly as before, on the run's default store.

mod common;

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

const UNAVAILABLE: &str = "is not available in this version of Runvil";

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
    /// The file's preamble says `status: target`, or the case has `model:`/`pack:`/`ui:` lines:
    /// skipped natively (the JS runner runs them).
    skip_native: bool,
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
    if digits.len() % 2 != 0 {
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
        let mut host_lines = false;
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
            } else if line.starts_with("model: ") || line.starts_with("pack: ") || line.starts_with("ui: ") {
                host_lines = true;
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
        // `--- requests` / `--- events` / `--- events-absent` (checked by the JS runner only).
        while i < lines.len() && is_trailer(lines[i]) && lines[i] != "--- files" {
            i += 1;
            while i < lines.len() && !lines[i].starts_with("=== ") && !is_trailer(lines[i]) {
                i += 1;
            }
        }
        let mut expect_files = None;
        if i < lines.len() && lines[i] == "--- files" {
            i += 1;
            let mut listing: Vec<(String, Vec<u8>)> = Vec::new();
            while i < lines.len() && !lines[i].starts_with("=== ") && !is_trailer(lines[i]) {
                if !lines[i].is_empty() {
                    let entry = parse_file_line(lines[i]).map_err(|e| format!("{file}:{}: case {name}: {e}", i + 1))?;
                    if listing.last().is_some_and(|(last, _)| last.as_str() >= entry.0.as_str()) {
                        return Err(format!("{file}:{}: case {name}: `--- files` must be sorted by path, without repeats", i + 1));
                    }
                    listing.push(entry);
                }
                i += 1;
            }
            expect_files = Some(listing);
        }
        while i < lines.len() && is_trailer(lines[i]) && lines[i] != "--- files" {
            i += 1;
            while i < lines.len() && !lines[i].starts_with("=== ") && !is_trailer(lines[i]) {
                i += 1;
            }
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
            skip_native: target || host_lines,
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

fn describe(outcome: &Result<Option<String>, runvil::RunError>) -> String {
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

/// None when the outcome matches, else a description of what was wrong.
fn check(case: &Case, outcome: &Result<Option<String>, runvil::RunError>) -> Option<String> {
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
    let ok = match (&case.expect, outcome) {
        (Expect::Result(want), Ok(Some(got))) => want == got,
        (Expect::ResultNone, Ok(None)) => true,
        (Expect::Error { kind, message }, Err(e)) => e.kind.as_str() == kind && &e.message == message,
        (Expect::ErrorContains { kind, lines }, Err(e)) => e.kind.as_str() == kind && lines.iter().all(|l| e.message.contains(l.as_str())),
        _ => false,
    };
    if ok {
        None
    } else {
        Some(format!("expected {}\n     got {}", describe_expect(&case.expect), describe(outcome)))
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

type Outcome = Result<Option<String>, runvil::RunError>;

/// Runs the case, with the store's files after the run when it used a host store.
fn run_case(case: &Case) -> (Outcome, Option<Vec<(String, Vec<u8>)>>) {
    if case.needs_store() {
        let (outcome, files) = common::run_with_store(&case.prompt, &case.args, case.files.clone(), case.read_only);
        (outcome, Some(files))
    } else {
        (common::run(&case.prompt, &case.args), None)
    }
}

#[test]
fn spec_cases() {
    let filter = std::env::var("SPEC_CASE").ok();
    let mut cases = Vec::new();
    for path in case_files() {
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        match parse_cases(&file, &text) {
            Ok(mut c) => cases.append(&mut c),
            Err(e) => panic!("{e}"),
        }
    }
    let mut seen = std::collections::HashSet::new();
    for c in &cases {
        assert!(seen.insert(c.name.clone()), "duplicate case name {} ({}:{})", c.name, c.file, c.line);
    }
    assert!(!cases.is_empty(), "no spec cases found");

    let (mut passed, mut pending, mut skipped, mut failures) = (0, 0, 0, Vec::new());
    for case in &cases {
        if filter.as_deref().is_some_and(|f| !case.name.contains(f)) {
            continue;
        }
        if case.skip_native {
            skipped += 1;
            continue;
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| run_case(case)));
        let problem = match outcome {
            Ok((outcome, files)) => {
                let problem = check(case, &outcome);
                let files_problem = match (&files, case.pending.is_some()) {
                    (Some(files), false) => check_files(case, files),
                    _ => None,
                };
                match (problem, files_problem) {
                    (None, None) => None,
                    (Some(p), None) | (None, Some(p)) => Some(p),
                    (Some(p), Some(q)) => Some(format!("{p}\n     {q}")),
                }
            }
            Err(panic) => {
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "(non-string panic)".to_string());
                Some(format!("the engine panicked: {msg}"))
            }
        };
        match problem {
            None if case.pending.is_some() => pending += 1,
            None => passed += 1,
            Some(p) => failures.push(format!("{} ({}:{})\n     {p}", case.name, case.file, case.line)),
        }
    }
    eprintln!(
        "spec cases: {} passed, {} pending (still unavailable), {} failed, {} skipped (status: target \
         files and cases with model:/pack:/ui:, run by pkg-tests/spec.test.mjs)",
        passed,
        pending,
        failures.len(),
        skipped
    );
    if !failures.is_empty() {
        panic!("{} spec case(s) failed:\n\n{}\n", failures.len(), failures.join("\n\n"));
    }
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
