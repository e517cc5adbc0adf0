//! Substitution (`001`): rendering `{{ path }}` placeholders and escapes in pending prose.
//!
//! One left-to-right pass over the raw prose: escapes resolve outside placeholders, each
//! placeholder resolves through a [`Resolver`] (which knows the run's `var`, `sys`, argument
//! string, `argv`, item and the section's Lua globals), and inserted text is never scanned again.
//! This module knows nothing about Lua; the Lua environment supplies the resolver.

use serde_json::Value as Json;
use std::fmt;

/// The ten substitution kinds (`001`, "Substitution error kinds").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubstKind {
    Unclosed,
    EmptySegment,
    BadPath,
    UnknownNamespace,
    NotATable,
    MissingKey,
    NullValue,
    NilItem,
    NilArgv,
    Serialize,
}

impl SubstKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SubstKind::Unclosed => "Unclosed",
            SubstKind::EmptySegment => "EmptySegment",
            SubstKind::BadPath => "BadPath",
            SubstKind::UnknownNamespace => "UnknownNamespace",
            SubstKind::NotATable => "NotATable",
            SubstKind::MissingKey => "MissingKey",
            SubstKind::NullValue => "NullValue",
            SubstKind::NilItem => "NilItem",
            SubstKind::NilArgv => "NilArgv",
            SubstKind::Serialize => "Serialize",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SubstError {
    pub kind: SubstKind,
    pub message: String,
    /// Byte offset of the failing placeholder's `{{` in the pending prose.
    pub offset: usize,
}

impl fmt::Display for SubstError {
    /// `{message} [{Kind} at byte {offset}]`: the text `tostring(err)` and run errors show.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{} at byte {}]", self.message, self.kind.as_str(), self.offset)
    }
}

/// What a bare-global lookup found.
pub enum Global {
    /// Unset or nil (including a nil from a `_G` `__index`).
    Nil,
    Data(Json),
    /// A function, userdata, thread, a table holding one or referring to itself, or a lookup
    /// that raised.
    NotData,
}

/// The run values placeholders read. Implemented by the Lua environment; tests use maps.
pub trait Resolver {
    /// The chain's argument string (never the Lua `args` global).
    fn args(&self) -> &str;
    /// The chain's parsed arguments; `None` is a nil argv.
    fn argv(&self) -> Option<&Json>;
    /// The seeded item; `None` when no item is seeded here.
    fn item(&self) -> Option<&Json>;
    /// The value at `path` (one key or more, through objects only, see [`walk`]) in `var` as the
    /// section's var stands now. The path is followed by reference, so a placeholder costs the
    /// size of what it lands on, not of the `var` field it starts from.
    fn var_at(&self, path: &[&str]) -> Option<Json>;
    /// A field of `sys`, `None` when the run has no such field.
    fn sys_field(&self, key: &str) -> Option<Json>;
    /// The section's global of that name, read through `_G`'s metatable.
    fn global(&mut self, name: &str) -> Global;
}

/// Renders `prose` in one pass. The first failing placeholder (left to right) is the error.
pub fn render(prose: &str, resolver: &mut dyn Resolver) -> Result<String, SubstError> {
    scan(prose, &mut |_, raw| resolve(raw, resolver))
}

/// Every placeholder of `prose` that fails whatever the run's values are (a malformed path, a
/// value that is never a table, an unclosed `{{`), with the error rendering gives it; what
/// depends on the run's values (a missing key, an unknown global, a nil item) is not looked at.
pub fn static_errors(prose: &str) -> Vec<SubstError> {
    let mut errors = Vec::new();
    let unclosed = scan(prose, &mut |offset, raw| {
        if let Err((kind, message)) = shape(raw.trim()) {
            errors.push(SubstError { kind, message, offset });
        }
        Ok(String::new())
    });
    errors.extend(unclosed.err());
    errors
}

/// The one pass over `prose`: escapes resolve here, and each placeholder's inner text (with
/// the offset of its `{{`) goes to `each`, whose text replaces it.
fn scan(prose: &str, each: &mut dyn FnMut(usize, &str) -> Result<String, Failure>) -> Result<String, SubstError> {
    let bytes = prose.as_bytes();
    let mut out = String::with_capacity(prose.len());
    let mut i = 0;
    let mut copied = 0; // start of the not-yet-copied literal run
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => {
                let rest = &bytes[i + 1..];
                let (emit, skip): (&str, usize) = if rest.starts_with(b"{{") {
                    ("{{", 3)
                } else if rest.starts_with(b"}}") {
                    ("}}", 3)
                } else if rest.first() == Some(&b'\\') {
                    ("\\", 2)
                } else if rest.first() == Some(&b'{') {
                    ("{", 2)
                } else if rest.first() == Some(&b'}') {
                    ("}", 2)
                } else {
                    i += 1; // an ordinary backslash stays
                    continue;
                };
                out.push_str(&prose[copied..i]);
                out.push_str(emit);
                i += skip;
                copied = i;
            }
            b'{' if bytes.get(i + 1) == Some(&b'{') => {
                out.push_str(&prose[copied..i]);
                let close = prose[i + 2..].find("}}").map(|j| i + 2 + j).ok_or(SubstError {
                    kind: SubstKind::Unclosed,
                    message: "unclosed '{{' in prose".into(),
                    offset: i,
                })?;
                let value = each(i, &prose[i + 2..close]).map_err(|(kind, message)| SubstError { kind, message, offset: i })?;
                out.push_str(&value);
                i = close + 2;
                copied = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&prose[copied..]);
    Ok(out)
}

/// Shows a path in a message: at most 80 characters (cut before escaping), `\n` `\r` `\t`
/// escaped, other control characters as `\u{xxxx}`.
pub fn quote_path(path: &str) -> String {
    let mut out = String::new();
    let mut chars = path.chars();
    for c in chars.by_ref().take(80) {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    if chars.next().is_some() {
        out.push_str("...");
    }
    out
}

type Failure = (SubstKind, String);

/// `{{ path }}` as messages show it.
fn placeholder(path: &str) -> String {
    format!("{{{{ {} }}}}", quote_path(path))
}

/// What a placeholder's path (trimmed) refuses by its shape alone, before any value is read:
/// an empty or padded segment, a dotted `args` or `item` (never tables), a bare `var` or `sys`,
/// and `prose` (the text being rendered).
fn shape(path: &str) -> Result<(), Failure> {
    let segments: Vec<&str> = path.split('.').collect();
    if segments.iter().any(|s| s.is_empty() || s.trim() != *s) {
        return Err((SubstKind::EmptySegment, format!("empty or padded path segment in {}", placeholder(path))));
    }
    match (segments[0], segments.len() > 1) {
        ("args", true) => Err((SubstKind::NotATable, "args is a string, not a table".into())),
        // The dotted form is refused before the item (or its absence) is looked at.
        ("item", true) => Err((SubstKind::NotATable, "item is a string, not a table".into())),
        (root @ ("var" | "sys"), false) => Err((SubstKind::BadPath, format!("bad path: {{{{ {root} }}}}"))),
        ("prose", _) => Err((SubstKind::Serialize, format!("global 'prose' in {} is not JSON data", placeholder(path)))),
        _ => Ok(()),
    }
}

fn resolve(raw: &str, r: &mut dyn Resolver) -> Result<String, Failure> {
    let path = raw.trim();
    shape(path)?;
    let placeholder = placeholder(path);
    let segments: Vec<&str> = path.split('.').collect();
    let missing = || (SubstKind::MissingKey, format!("missing {placeholder}"));
    let (root, rest) = (segments[0], &segments[1..]);
    let landed: Json = match root {
        "args" => return Ok(r.args().to_string()),
        "item" => {
            return match r.item() {
                None => Err((SubstKind::NilItem, "{{ item }} is nil (not inside a fanout arm)".into())),
                Some(Json::Null) => Ok("null".into()),
                Some(v) => Ok(render_value(v)),
            };
        }
        "var" | "sys" => {
            let Some((first, deeper)) = rest.split_first() else { return Err(missing()) };
            if root == "var" {
                r.var_at(rest).ok_or_else(missing)?
            } else {
                let field = r.sys_field(first).ok_or_else(missing)?;
                walk(&field, deeper).ok_or_else(missing)?.clone()
            }
        }
        "argv" => {
            let argv = match r.argv() {
                None | Some(Json::Null) => return Err((SubstKind::NilArgv, format!("{placeholder} is nil (the args string is not JSON)"))),
                Some(v) => v,
            };
            walk(argv, rest).ok_or_else(missing)?.clone()
        }
        name => {
            let not_data = || (SubstKind::Serialize, format!("global '{}' in {placeholder} is not JSON data", quote_path(name)));
            match r.global(name) {
                Global::Nil => {
                    return Err((
                        SubstKind::UnknownNamespace,
                        format!("unknown namespace or global '{}' in {placeholder}", quote_path(name)),
                    ))
                }
                Global::NotData => return Err(not_data()),
                Global::Data(v) => walk(&v, rest).ok_or_else(missing)?.clone(),
            }
        }
    };
    if landed.is_null() {
        return Err((SubstKind::NullValue, format!("missing {placeholder}")));
    }
    Ok(render_value(&landed))
}

/// Follows dotted keys through objects only (never into arrays or past scalars), by reference:
/// only the caller's copy of where it lands costs anything.
pub fn walk<'a>(mut value: &'a Json, keys: &[&str]) -> Option<&'a Json> {
    for key in keys {
        value = match value {
            Json::Object(map) => map.get(*key)?,
            _ => return None,
        };
    }
    Some(value)
}

/// Strings render bare, numbers and booleans in their plain form, tables as compact JSON
/// with sorted keys.
pub fn render_value(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Env {
        args: String,
        argv: Option<Json>,
        item: Option<Json>,
        var: Json,
        globals: Vec<(String, Global)>,
    }

    impl Resolver for Env {
        fn args(&self) -> &str {
            &self.args
        }
        fn argv(&self) -> Option<&Json> {
            self.argv.as_ref()
        }
        fn item(&self) -> Option<&Json> {
            self.item.as_ref()
        }
        fn var_at(&self, path: &[&str]) -> Option<Json> {
            walk(&self.var, path).cloned()
        }
        fn sys_field(&self, key: &str) -> Option<Json> {
            (key == "id").then(|| json!(3))
        }
        fn global(&mut self, name: &str) -> Global {
            match self.globals.iter().find(|(n, _)| n == name) {
                Some((_, Global::Data(v))) => Global::Data(v.clone()),
                Some((_, Global::NotData)) => Global::NotData,
                _ => Global::Nil,
            }
        }
    }

    fn env() -> Env {
        Env {
            args: "docs".into(),
            argv: Some(json!({"prose": "docs"})),
            item: None,
            var: json!({"x": 1, "row": {"a": 1}, "n": null, "name": "Ada", "first name": "Ada", "arr": [1, 2]}),
            globals: vec![("answer".into(), Global::Data(json!(42))), ("f".into(), Global::NotData)],
        }
    }

    fn ok(prose: &str) -> String {
        render(prose, &mut env()).unwrap()
    }

    fn fail(prose: &str) -> String {
        render(prose, &mut env()).unwrap_err().to_string()
    }

    #[test]
    fn escapes() {
        assert_eq!(
            ok(r"literal \{{ args }} here, close \}} brace, back \\ slash"),
            r"literal {{ args }} here, close }} brace, back \ slash"
        );
        assert_eq!(ok(r"\{{x}}{{ args }}"), "{{x}}docs");
        assert_eq!(ok(r"C:\temp\new a\b \d+ \{ \} end\"), r"C:\temp\new a\b \d+ { } end\");
        assert_eq!(ok("Set {x} and close }} here."), "Set {x} and close }} here.");
        assert_eq!(ok(r"\\\\"), r"\\");
    }

    #[test]
    fn paths_and_values() {
        assert_eq!(ok("cell {{ var.row.a }}, again {{var.row.a}}, row {{ var.row }}"), "cell 1, again 1, row {\"a\":1}");
        assert_eq!(ok("Hello {{ var.first name }}."), "Hello Ada.");
        assert_eq!(ok("Input: {{\nargs\n}}"), "Input: docs");
        assert_eq!(ok("{{ answer }} {{ argv }}"), "42 {\"prose\":\"docs\"}");
    }

    #[test]
    fn errors() {
        assert_eq!(fail("Missing: {{ var.missing }}."), "missing {{ var.missing }} [MissingKey at byte 9]");
        assert_eq!(fail("{{ }}"), "empty or padded path segment in {{  }} [EmptySegment at byte 0]");
        assert_eq!(fail("{{ var. x }}"), "empty or padded path segment in {{ var. x }} [EmptySegment at byte 0]");
        assert_eq!(fail("{{ var }}"), "bad path: {{ var }} [BadPath at byte 0]");
        assert_eq!(fail("{{ sys }}"), "bad path: {{ sys }} [BadPath at byte 0]");
        assert_eq!(fail("a {{ ghost.x }}"), "unknown namespace or global 'ghost' in {{ ghost.x }} [UnknownNamespace at byte 2]");
        assert_eq!(fail("{{ args.x }}"), "args is a string, not a table [NotATable at byte 0]");
        assert_eq!(fail("{{ item.x }}"), "item is a string, not a table [NotATable at byte 0]");
        assert_eq!(fail("{{ item }}"), "{{ item }} is nil (not inside a fanout arm) [NilItem at byte 0]");
        assert_eq!(fail("{{ var.n }}"), "missing {{ var.n }} [NullValue at byte 0]");
        assert_eq!(fail("{{ var.name.first }}"), "missing {{ var.name.first }} [MissingKey at byte 0]");
        assert_eq!(fail("{{ var.arr.1 }}"), "missing {{ var.arr.1 }} [MissingKey at byte 0]");
        assert_eq!(fail("{{ sys.bogus }}"), "missing {{ sys.bogus }} [MissingKey at byte 0]");
        assert_eq!(fail("{{ f }}"), "global 'f' in {{ f }} is not JSON data [Serialize at byte 0]");
        assert_eq!(fail("{{ prose }}"), "global 'prose' in {{ prose }} is not JSON data [Serialize at byte 0]");
        assert_eq!(fail("open {{ args"), "unclosed '{{' in prose [Unclosed at byte 5]");
        assert_eq!(fail("{{var.x}}{{ var.nope }}"), "missing {{ var.nope }} [MissingKey at byte 9]");
    }

    #[test]
    fn nil_argv_and_item_null() {
        let mut e = env();
        e.argv = None;
        assert_eq!(
            render("{{ argv.query }}", &mut e).unwrap_err().to_string(),
            "{{ argv.query }} is nil (the args string is not JSON) [NilArgv at byte 0]"
        );
        e.item = Some(Json::Null);
        assert_eq!(render("{{ item }}", &mut e).unwrap(), "null");
    }

    #[test]
    fn quoting() {
        assert_eq!(quote_path("a\nb\tc\u{1b}"), "a\\nb\\tc\\u{001b}");
        let long = "x".repeat(81);
        assert_eq!(quote_path(&long), format!("{}...", "x".repeat(80)));
    }
}
