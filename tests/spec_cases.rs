//! Runs the language chapters' worked examples from `spec-tests/*.cases` (format in
//! `spec-tests/README.md`) against the native engine. Every mismatch is collected and reported
//! together. A `pending: <feature>` case must currently fail with the "is not available in this
//! version of Runvil" error, so it flips loudly once its feature lands.
//!
//! `SPEC_CASE=<substring>` runs only the cases whose name contains the substring.

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
    while i < lines.len() {
        let start = i + 1;
        let name = lines[i]["=== ".len()..].trim().to_string();
        if name.is_empty() {
            return Err(format!("{file}:{start}: empty case name"));
        }
        i += 1;
        let mut args = String::new();
        let mut pending = None;
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
                args = serde_json::from_str::<String>(rest)
                    .map_err(|e| format!("{file}:{i}: case {name}: bad args-json: {e}"))?;
            } else if let Some(rest) = line.strip_prefix("pending: ") {
                pending = Some(rest.trim().to_string());
            } else if line.trim().is_empty() {
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
        while i < lines.len() && !lines[i].starts_with("=== ") {
            i += 1;
        }
        let body = &lines[body_start..i];
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
        cases.push(Case { file: file.to_string(), line: start, name, args, pending, prompt, expect });
    }
    Ok(cases)
}

fn is_expect_marker(line: &str) -> bool {
    line == "--- result"
        || line == "--- result-none"
        || line.starts_with("--- error ")
        || line.starts_with("--- error-contains ")
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
        (Expect::ErrorContains { kind, lines }, Err(e)) => {
            e.kind.as_str() == kind && lines.iter().all(|l| e.message.contains(l.as_str()))
        }
        _ => false,
    };
    if ok {
        None
    } else {
        Some(format!("expected {}\n     got {}", describe_expect(&case.expect), describe(outcome)))
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

    let (mut passed, mut pending, mut failures) = (0, 0, Vec::new());
    for case in &cases {
        if filter.as_deref().is_some_and(|f| !case.name.contains(f)) {
            continue;
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| common::run(&case.prompt, &case.args)));
        let problem = match outcome {
            Ok(outcome) => check(case, &outcome),
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
        "spec cases: {} passed, {} pending (still unavailable), {} failed",
        passed,
        pending,
        failures.len()
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
    assert_eq!(
        cases[3].expect,
        Expect::ErrorContains { kind: "Parse".into(), lines: vec!["x".into(), "y".into()] }
    );
}
