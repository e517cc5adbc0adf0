//! The frontmatter's YAML: what it reads, and hostile text (deep nesting, alias bombs, huge
//! scalars, tabs, byte order marks, duplicate keys, escapes), each refused with its place or read
//! in time linear in its length.
mod common;
use common::*;
use runvil::parse::frontmatter;
use runvil::parse::yaml::{parse, Yaml};
use runvil::RunErrorKind;
use std::time::{Duration, Instant};

fn s(text: &str) -> Yaml {
    Yaml::Str(text.into())
}

fn map(entries: Vec<(&str, Yaml)>) -> Yaml {
    Yaml::Map(entries.into_iter().map(|(k, v)| (s(k), v)).collect())
}

/// The message and the (line, column) a frontmatter `text` (starting at file line 2) fails with.
fn refused(text: &str) -> (String, usize, usize) {
    let e = frontmatter::parse(text, 2).expect_err(text);
    assert_eq!(e.kind, RunErrorKind::Frontmatter);
    (e.message, e.line.unwrap_or(0), e.column.unwrap_or(0))
}

fn quick<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let out = f();
    assert!(started.elapsed() < Duration::from_secs(2), "{what} took {:?}", started.elapsed());
    out
}

#[test]
fn a_typical_frontmatter_reads_as_written() {
    let text = "\
name: research
description: >
  Finds sources
  and summarises them.
runvil: 0
uses: [web, acme/notes]
models:
  default: &base { provider: openai, model: \"gpt-5\", temperature: 0.2 }
  fast:
    <<: x
    provider: local
args:
  topic: { type: string, default: 'rivers' }
  depth:
    type: integer
    default: 0x10
input:
  - notes/today.md   # a comment
output: []
max_tool_iterations: 8
";
    let fm = frontmatter::parse(text, 2).unwrap();
    assert_eq!(fm.name.as_deref(), Some("research"));
    assert_eq!(fm.description.as_deref(), Some("Finds sources and summarises them.\n"));
    assert_eq!(fm.uses, ["web", "acme/notes"]);
    assert_eq!(fm.models["default"], serde_json::json!({"provider": "openai", "model": "gpt-5", "temperature": 0.2}));
    assert_eq!(fm.models["fast"], serde_json::json!({"<<": "x", "provider": "local"}));
    let args = fm.args.unwrap();
    assert_eq!(args["topic"], serde_json::json!({"type": "string", "default": "rivers"}));
    assert_eq!(args["depth"], serde_json::json!({"type": "integer", "default": 16}));
    assert_eq!(fm.input, ["notes/today.md"]);
    assert!(fm.output.is_empty());
    assert_eq!(fm.max_tool_iterations, Some(8));
}

#[test]
fn scalars_resolve_by_the_core_schema() {
    let doc = parse("a: ~\nb: null\nc: True\nd: -12\ne: 0o17\nf: 1.5e3\ng: 007\nh: '1'\ni: 1_000\nj: .inf\nk: \"x\" # c\nl:\n").unwrap();
    let want = map(vec![
        ("a", Yaml::Null),
        ("b", Yaml::Null),
        ("c", Yaml::Bool(true)),
        ("d", Yaml::Int(-12)),
        ("e", Yaml::Int(15)),
        ("f", Yaml::Float(1500.0)),
        ("g", s("007")),
        ("h", s("1")),
        ("i", s("1_000")),
        ("j", Yaml::Float(f64::INFINITY)),
        ("k", s("x")),
        ("l", Yaml::Null),
    ]);
    assert_eq!(doc, want);
}

#[test]
fn block_scalars_and_folding() {
    let doc = parse("lit: |\n  a\n   b\n\n  c\nstrip: >-\n  one\n  two\n\n  three\nkeep: |+\n  x\n\nq: \"a\n  b\\\n  c\"\n").unwrap();
    let want = map(vec![("lit", s("a\n b\n\nc\n")), ("strip", s("one two\nthree")), ("keep", s("x\n\n")), ("q", s("a bc"))]);
    assert_eq!(doc, want);
}

#[test]
fn lists_at_their_keys_column_and_compact_maps() {
    let doc = parse("a:\n- x\n- k: 1\n  l: [2, {m: n}]\nb: - \n").map(|_| ()).unwrap_err();
    assert_eq!(doc.message, "block sequence entries are not allowed in this context");
    let doc = parse("a:\n- x\n- k: 1\n  l: [2, {m: n}]\nb: y\n").unwrap();
    let item = map(vec![("k", Yaml::Int(1)), ("l", Yaml::Seq(vec![Yaml::Int(2), map(vec![("m", s("n"))])]))]);
    assert_eq!(doc, map(vec![("a", Yaml::Seq(vec![s("x"), item])), ("b", s("y"))]));
}

#[test]
fn deep_block_nesting_is_refused_at_the_level_past_the_limit() {
    let (msg, line, col) = quick("block list nesting", || refused(&format!("x: {}1\n", "- ".repeat(100_000))));
    // `x: ` is refused first: a list cannot start after a key on its line.
    assert_eq!(msg, "invalid frontmatter: block sequence entries are not allowed in this context (line 2, column 4)");
    assert_eq!((line, col), (2, 4));
    let (msg, line, col) = quick("block list nesting", || refused(&format!("x:\n  {}1\n", "- ".repeat(100_000))));
    assert_eq!(msg, "invalid frontmatter: collections nested deeper than 64 levels (line 3, column 129)");
    assert_eq!((line, col), (3, 129));
    let nested: String = (0..100).map(|i| format!("{}k:\n", " ".repeat(i))).collect();
    let (msg, ..) = quick("block map nesting", || refused(&nested));
    assert_eq!(msg, "invalid frontmatter: collections nested deeper than 64 levels (line 66, column 65)");
    // Block and flow count together.
    let mixed = format!("models:\n  a:\n{}", (0..62).map(|i| format!("{}k:\n", " ".repeat(4 + i))).collect::<String>());
    let mixed = format!("{mixed}{}v: [[1]]\n", " ".repeat(66));
    let (msg, ..) = refused(&mixed);
    assert!(msg.starts_with("invalid frontmatter: collections nested deeper than 64 levels"), "{msg}");
}

#[test]
fn alias_bombs_are_refused_and_small_aliases_work() {
    let mut bomb = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (name, prev) in ["b", "c", "d", "e", "f", "g", "h", "i"].iter().zip(["a", "b", "c", "d", "e", "f", "g", "h"]) {
        bomb.push_str(&format!("{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    let (msg, line, col) = quick("billion laughs", || refused(&bomb));
    assert_eq!(msg, format!("invalid frontmatter: aliases copy more than 10000 values (line {line}, column {col})"));
    assert_eq!(line, 6);
    // One long string, aliased many times.
    let long = format!("a: &s \"{}\"\nb: [{}]\n", "x".repeat(100_000), vec!["*s"; 20].join(", "));
    let (msg, ..) = quick("string bomb", || refused(&long));
    assert!(msg.starts_with("invalid frontmatter: aliases copy more than 1048576 bytes of text"), "{msg}");
    // An alias cannot nest a collection deeper than the limit either.
    let deep = format!("a: &d {}{}\nb: {}*d{}\n", "[".repeat(40), "]".repeat(40), "[".repeat(40), "]".repeat(40));
    let (msg, ..) = refused(&deep);
    assert!(msg.starts_with("invalid frontmatter: collections nested deeper than 64 levels"), "{msg}");
    let (msg, ..) = refused("a: *nope\n");
    assert_eq!(msg, "invalid frontmatter: unknown anchor `nope` (line 2, column 4)");
    let fm = frontmatter::parse("models:\n  default: &m { provider: x }\n  other: *m\n", 2).unwrap();
    assert_eq!(fm.models["other"], serde_json::json!({"provider": "x"}));
}

#[test]
fn huge_scalars_and_many_keys_read_in_linear_time() {
    let big = "y".repeat(8 << 20);
    let fm = quick("8 MB plain scalar", || frontmatter::parse(&format!("description: {big}\n"), 2).unwrap());
    assert_eq!(fm.description.map(|d| d.len()), Some(8 << 20));
    let fm = quick("8 MB quoted scalar", || frontmatter::parse(&format!("name: \"{big}\"\n"), 2).unwrap());
    assert_eq!(fm.name.map(|d| d.len()), Some(8 << 20));
    let keys: String = (0..200_000).map(|i| format!("k{i}: {i}, ")).collect();
    let fm = quick("200,000 keys", || frontmatter::parse(&format!("models:\n  m: {{{keys}}}\n"), 2).unwrap());
    assert_eq!(fm.models["m"].as_object().map(|o| o.len()), Some(200_000));
    let anchors: String = (0..100_000).map(|i| format!("- &a{i} {i}\n")).collect();
    quick("100,000 anchors", || parse(&anchors).unwrap());
    // The same key 200,000 times: the duplicate is found at the second.
    let same: String = (0..200_000).map(|_| "k: 1, ").collect();
    let (msg, ..) = quick("200,000 equal keys", || refused(&format!("models:\n  m: {{{same}}}\n")));
    assert_eq!(msg, "invalid frontmatter: duplicate entry with key \"k\" (line 3, column 13)");
}

#[test]
fn duplicate_keys_are_an_error_at_the_second() {
    let (msg, line, col) = refused("name: a\ndescription: b\nname: c\n");
    assert_eq!(msg, "invalid frontmatter: duplicate entry with key \"name\" (line 4, column 1)");
    assert_eq!((line, col), (4, 1));
    let (msg, ..) = refused("models:\n  m: {a: 1, b: 2, a: 3}\n");
    assert_eq!(msg, "invalid frontmatter: duplicate entry with key \"a\" (line 3, column 19)");
    let (msg, ..) = refused("args:\n  t:\n    type: string\n    1: x\n    0x1: y\n");
    assert_eq!(msg, "invalid frontmatter: duplicate entry with key 1 (line 6, column 5)");
    // Equal text in different types is no duplicate: `1` and `'1'`.
    assert!(parse("1: a\n'1': b\n").is_ok());
}

#[test]
fn tabs_indent_nothing_but_may_separate() {
    let (msg, line, col) = refused("models:\n\tm: {}\n");
    assert_eq!(msg, "invalid frontmatter: a tab cannot indent a line (YAML indents with spaces) (line 3, column 1)");
    assert_eq!((line, col), (3, 1));
    let fm = frontmatter::parse("name:\tx\t\ndescription: \"a\tb\"\n", 2).unwrap();
    assert_eq!((fm.name.as_deref(), fm.description.as_deref()), (Some("x"), Some("a\tb")));
}

#[test]
fn byte_order_marks_and_control_characters() {
    let fm = frontmatter::parse("\u{feff}name: x\n", 2).unwrap();
    assert_eq!(fm.name.as_deref(), Some("x"));
    let (msg, ..) = refused("name: x\u{feff}\n");
    assert_eq!(msg, "invalid frontmatter: a byte order mark (U+FEFF) is allowed only at the start (line 2, column 8)");
    let (msg, ..) = refused("name: a\u{0}b\n");
    assert_eq!(msg, "invalid frontmatter: control characters are not allowed (line 2, column 8)");
    // A prompt whose first line is a byte order mark and `---` has no frontmatter: the mark is
    // text, not the opening line.
    assert_eq!(result("\u{feff}# T\n\n## M\n\n```lua\nreturn 'ok'\n```\n", ""), "ok");
    // CRLF line ends read like LF.
    let fm = frontmatter::parse("name: x\r\ndescription: |\r\n  a\r\n  b\r\n", 2).unwrap();
    assert_eq!((fm.name.as_deref(), fm.description.as_deref()), (Some("x"), Some("a\nb\n")));
}

#[test]
fn escapes_are_unicode_code_points() {
    let fm = frontmatter::parse("name: \"\\x41\\u00e9\\U0001F600\\xff\\0\\t\\N\"\n", 2).unwrap();
    assert_eq!(fm.name.as_deref(), Some("A\u{e9}\u{1F600}\u{ff}\0\t\u{85}"));
    let (msg, ..) = refused("name: \"\\ud800\"\n");
    assert_eq!(msg, "invalid frontmatter: found invalid Unicode character escape code (line 2, column 8)");
    let (msg, ..) = refused("name: \"\\q\"\n");
    assert_eq!(msg, "invalid frontmatter: found unknown escape character (line 2, column 8)");
    let (msg, ..) = refused("name: \"\\x4\"\n");
    assert_eq!(msg, "invalid frontmatter: did not find expected hexdecimal number (line 2, column 8)");
    let (msg, ..) = refused("name: \"never closed\n");
    assert_eq!(msg, "invalid frontmatter: found unexpected end of stream (line 2, column 7)");
}

#[test]
fn what_frontmatter_yaml_leaves_out_is_refused_by_name() {
    let (msg, ..) = refused("name: !!str 1\n");
    assert_eq!(msg, "invalid frontmatter: tags (`!`) are not supported in frontmatter (line 2, column 7)");
    let (msg, ..) = refused("? name\n: x\n");
    assert_eq!(msg, "invalid frontmatter: explicit keys (`? key`) are not supported (line 2, column 1)");
    let (msg, ..) = refused("name: x\n--- y\n");
    assert_eq!(msg, "invalid frontmatter: a frontmatter holds one YAML document: found a `---` or `...` line (line 3, column 1)");
    let (msg, ..) = refused("name: a: b\n");
    assert_eq!(msg, "invalid frontmatter: mapping values are not allowed in this context (line 2, column 8)");
    let (msg, ..) = refused("name: [a, b\n");
    assert_eq!(msg, "invalid frontmatter: did not find expected ',' or ']' (line 3, column 1)");
    let (msg, ..) = refused("name: x\n  description: y\n");
    assert_eq!(msg, "invalid frontmatter: mapping values are not allowed in this context (line 3, column 14)");
}

#[test]
fn a_line_indented_past_its_block_is_refused_at_it() {
    let (msg, line, col) = refused("models:\n  a: \"1\"\n    b: 2\n");
    assert_eq!(msg, "invalid frontmatter: this line is indented more than the keys of its map (line 4, column 5)");
    assert_eq!((line, col), (4, 5));
    let (msg, ..) = refused("input:\n  - \"a\"\n    - b\n");
    assert_eq!(msg, "invalid frontmatter: this line is indented more than the entries of its list (line 4, column 5)");
    // At the block's own column, the next key or entry; to its left, the block ends.
    assert!(parse("models:\n  a: \"1\"\n  b: 2\nc: 3\n").is_ok());
    assert!(parse("input:\n  - \"a\"\n  - b\nc: 3\n").is_ok());
}
