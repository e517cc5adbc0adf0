//! YAML frontmatter: the `---` block at the top of a prompt, read by [`super::yaml`] and checked
//! against the allowed keys (docs/language.md, "Frontmatter"). Every failure is a `Frontmatter`
//! error; where the mistake has a place in the file, the error carries its line and column.

use super::yaml::{self, Yaml};
use std::collections::BTreeMap;

use crate::error::{RunError, RunErrorKind};
use crate::ids::{pack_id, uses_entry_error, ALIAS_GRAMMAR};

/// The Lua tools API checks local tool aliases through the frontmatter, whose keys share the grammar.
use crate::ids::is_alias;

/// What the frontmatter declares. Absent keys take the implicit defaults.
#[derive(Debug, Clone, Default)]
pub struct Frontmatter {
    pub name: Option<String>,
    pub description: Option<String>,
    /// Pack ids in declaration order, each as written (`web`, `acme/poop`).
    pub uses: Vec<String>,
    /// Role label -> spec object (as JSON), in label order.
    pub models: BTreeMap<String, serde_json::Value>,
    /// `None`: no `args:` key, the implicit `{prose = args}` declaration applies.
    pub args: Option<BTreeMap<String, serde_json::Value>>,
    pub input: Vec<String>,
    pub output: Vec<String>,
    pub max_tool_iterations: Option<u64>,
}

pub const ALLOWED_KEYS: &[&str] =
    &["name", "description", "runvil", "promptforge", "uses", "models", "args", "input", "output", "max_tool_iterations"];

/// Splits `source` into (frontmatter text, its first line number, body offset).
/// A prompt without a leading `---` line has no frontmatter.
pub fn split(source: &str) -> Result<Option<(&str, usize)>, RunError> {
    let first_end = source.find('\n').unwrap_or(source.len());
    if source[..first_end].trim_end() != "---" {
        return Ok(None);
    }
    let mut pos = first_end + 1;
    let mut line = 2;
    while pos <= source.len() {
        let end = source[pos..].find('\n').map(|i| pos + i).unwrap_or(source.len());
        let text = source[pos..end].trim_end();
        if text == "---" || text == "..." {
            let body_start = (end + 1).min(source.len());
            return Ok(Some((&source[first_end + 1..pos], body_start)));
        }
        if end == source.len() {
            break;
        }
        pos = end + 1;
        line += 1;
    }
    let _ = line;
    Err(RunError::at(
        RunErrorKind::Frontmatter,
        "invalid frontmatter: the `---` block opened at line 1 is never closed by a `---` line",
        1,
        1,
    ))
}

/// A YAML value as a message shows it (without pulling in the YAML emitter).
fn show(v: &Yaml) -> String {
    match v {
        Yaml::Null => "null".into(),
        Yaml::Bool(b) => b.to_string(),
        Yaml::Int(_) => v.as_i64().map(|i| i.to_string()).unwrap_or_else(|| "a number".into()),
        Yaml::Float(_) => "a number".into(),
        Yaml::Str(s) => s.clone(),
        other => type_name(other).into(),
    }
}

fn type_name(v: &Yaml) -> &'static str {
    match v {
        Yaml::Null => "null",
        Yaml::Bool(_) => "a boolean",
        Yaml::Int(_) | Yaml::Float(_) => "a number",
        Yaml::Str(_) => "a string",
        Yaml::Seq(_) => "a list",
        Yaml::Map(_) => "a map",
    }
}

/// Finds where `key:` starts at the top level of the frontmatter (1-based file line, column).
fn key_position(text: &str, first_line: usize, key: &str) -> (usize, usize) {
    for (i, l) in text.lines().enumerate() {
        let t = l.trim_start_matches(['"', '\'']);
        if t.starts_with(key) && t[key.len()..].trim_start_matches(['"', '\'']).trim_start().starts_with(':') && !l.starts_with(' ') {
            return (first_line + i, 1);
        }
    }
    (first_line, 1)
}

/// Finds a list entry's position: the first line after `key:` whose text holds the entry.
fn entry_position(text: &str, first_line: usize, key: &str, entry: &str) -> (usize, usize) {
    let (key_line, _) = key_position(text, first_line, key);
    for (i, l) in text.lines().enumerate().skip(key_line - first_line) {
        if let Some(col) = l.find(entry) {
            return (first_line + i, col + 1);
        }
    }
    (key_line, 1)
}

fn err(message: String, pos: (usize, usize)) -> RunError {
    RunError::at(RunErrorKind::Frontmatter, message, pos.0, pos.1)
}

/// The deepest nesting of collections a frontmatter may use. `too_deep` finds flow collections
/// (`[` and `{`) nested deeper in one pass over the text, before any YAML is read; the reader
/// refuses the same depth for block and flow collections together.
pub const MAX_NESTING: usize = yaml::MAX_DEPTH;

/// The 1-based (line, column) where flow collections first nest deeper than [`MAX_NESTING`], or
/// `None`. A linear scan that knows just enough YAML: quoted scalars and comments are skipped,
/// and a bracket counts when it opens a token (at depth 0, brackets inside plain text are text).
fn too_deep(text: &str) -> Option<(usize, usize)> {
    let (mut depth, mut line, mut col) = (0usize, 1usize, 0usize);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut token_start = true;
    let mut comment = false;
    for c in text.chars() {
        col += 1;
        if c == '\n' {
            (line, col, comment, token_start) = (line + 1, 0, false, true);
            continue;
        }
        if comment {
            continue;
        }
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if q == '"' && c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        let starts = token_start || depth > 0;
        match c {
            '#' if token_start => comment = true,
            '"' | '\'' if token_start => quote = Some(c),
            '[' | '{' if starts => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some((line, col));
                }
            }
            ']' | '}' if depth > 0 => depth -= 1,
            _ => {}
        }
        token_start = c.is_whitespace() || (depth > 0 && matches!(c, '[' | '{' | ',' | ':'));
    }
    None
}

/// Parses and checks the frontmatter text that starts at file line `first_line`.
pub fn parse(text: &str, first_line: usize) -> Result<Frontmatter, RunError> {
    if let Some((line, col)) = too_deep(text) {
        let (line, col) = (first_line + line - 1, col);
        return Err(err(
            format!("invalid frontmatter: collections nested deeper than {MAX_NESTING} levels (line {line}, column {col})"),
            (line, col),
        ));
    }
    let doc = yaml::parse(text).map_err(|e| {
        let (line, col) = (first_line + e.line - 1, e.column);
        err(format!("invalid frontmatter: {} (line {line}, column {col})", e.message), (line, col))
    })?;
    let map = match doc {
        Yaml::Null => return Ok(Frontmatter::default()),
        Yaml::Map(m) => m,
        other => return Err(err(format!("invalid frontmatter: expected a map of keys, got {}", type_name(&other)), (first_line, 1))),
    };
    let mut fm = Frontmatter::default();
    for (k, v) in map {
        let key = match &k {
            Yaml::Str(s) => s.clone(),
            other => return Err(err(format!("invalid frontmatter: keys must be strings, got {}", type_name(other)), (first_line, 1))),
        };
        let pos = key_position(text, first_line, &key);
        let string_value = |v: &Yaml| -> Result<String, RunError> {
            match v {
                Yaml::Str(s) => Ok(s.clone()),
                other => Err(err(
                    format!("invalid frontmatter: `{key}` must be a string, got {} (line {}, column {})", type_name(other), pos.0, pos.1),
                    pos,
                )),
            }
        };
        match key.as_str() {
            "name" => fm.name = Some(string_value(&v)?),
            "description" => fm.description = Some(string_value(&v)?),
            "runvil" | "promptforge" => {
                let ok = v.as_u64() == Some(0);
                if !ok {
                    let shown = show(&v);
                    return Err(err(
                        format!(
                            "invalid frontmatter: unsupported language version `{key}: {}` (line {}, column {}); this engine runs version 0",
                            shown.trim(),
                            pos.0,
                            pos.1
                        ),
                        pos,
                    ));
                }
            }
            "uses" => fm.uses = parse_uses(&v, text, first_line, pos)?,
            "models" => fm.models = parse_models(&v, pos)?,
            "args" => fm.args = Some(parse_args(&v, pos)?),
            "input" | "output" => {
                let list = string_list(&v, &key, pos)?;
                if key == "input" {
                    fm.input = list
                } else {
                    fm.output = list
                }
            }
            "max_tool_iterations" => match v.as_u64() {
                Some(n) if n >= 1 => fm.max_tool_iterations = Some(n),
                _ => {
                    return Err(err(
                        format!("invalid frontmatter: `max_tool_iterations` must be a positive integer (line {}, column {})", pos.0, pos.1),
                        pos,
                    ))
                }
            },
            _ => {
                return Err(err(
                    format!(
                        "invalid frontmatter: unknown key `{key}` (line {}, column {}); allowed keys: {}",
                        pos.0,
                        pos.1,
                        ALLOWED_KEYS.join(", ")
                    ),
                    pos,
                ))
            }
        }
    }
    Ok(fm)
}

fn string_list(v: &Yaml, key: &str, pos: (usize, usize)) -> Result<Vec<String>, RunError> {
    let bad = || err(format!("invalid frontmatter: `{key}` must be a list of store paths (line {}, column {})", pos.0, pos.1), pos);
    match v {
        Yaml::Null => Ok(vec![]),
        Yaml::Seq(items) => items.iter().map(|i| i.as_str().map(str::to_string).ok_or_else(bad)).collect(),
        _ => Err(bad()),
    }
}

/// `what` (a role's spec, an argument's declaration) as JSON, which the engine hands to Lua and
/// to the host. Map keys JSON cannot spell (null, a list, a map) are refused, and so are `.nan`
/// and `.inf`, which JSON has no number for.
fn yaml_to_json(v: &Yaml, what: &str, pos: (usize, usize)) -> Result<serde_json::Value, RunError> {
    let reason = if has_non_finite(v) { "JSON has no NaN or infinite numbers" } else { "key must be a string" };
    json(v).ok_or_else(|| err(format!("invalid frontmatter: {what} has no JSON form: {reason} (line {}, column {})", pos.0, pos.1), pos))
}

/// The JSON form of a value, or `None` when a key or a number has none. Boolean and number
/// keys become their text, as JSON writers spell them; a later equal key replaces an earlier.
fn json(v: &Yaml) -> Option<serde_json::Value> {
    use serde_json::Value as Json;
    Some(match v {
        Yaml::Null => Json::Null,
        Yaml::Bool(b) => Json::Bool(*b),
        Yaml::Int(i) => match u64::try_from(*i) {
            Ok(u) => Json::from(u),
            Err(_) => Json::from(i64::try_from(*i).ok()?),
        },
        Yaml::Float(f) => Json::Number(serde_json::Number::from_f64(*f)?),
        Yaml::Str(s) => Json::String(s.clone()),
        Yaml::Seq(items) => Json::Array(items.iter().map(json).collect::<Option<_>>()?),
        Yaml::Map(entries) => {
            let mut map = serde_json::Map::new();
            for (k, v) in entries {
                let key = match k {
                    Yaml::Str(s) => s.clone(),
                    Yaml::Bool(_) | Yaml::Int(_) | Yaml::Float(_) => json(k)?.to_string(),
                    Yaml::Null | Yaml::Seq(_) | Yaml::Map(_) => return None,
                };
                map.insert(key, json(v)?);
            }
            Json::Object(map)
        }
    })
}

fn has_non_finite(v: &Yaml) -> bool {
    match v {
        Yaml::Float(f) => !f.is_finite(),
        Yaml::Seq(items) => items.iter().any(has_non_finite),
        Yaml::Map(m) => m.iter().any(|(k, v)| has_non_finite(k) || has_non_finite(v)),
        Yaml::Null | Yaml::Bool(_) | Yaml::Int(_) | Yaml::Str(_) => false,
    }
}

/// A map key that must follow the alias grammar (role labels, argument names).
fn alias_key(k: &Yaml, what: &str, under: &str, pos: (usize, usize)) -> Result<String, RunError> {
    let key = k.as_str().unwrap_or_default().to_string();
    if is_alias(&key) {
        return Ok(key);
    }
    Err(err(
        format!(
            "invalid frontmatter: invalid {what} `{}` under {under}: expected {ALIAS_GRAMMAR} (line {}, column {})",
            show(k),
            pos.0,
            pos.1
        ),
        pos,
    ))
}

fn parse_models(v: &Yaml, pos: (usize, usize)) -> Result<BTreeMap<String, serde_json::Value>, RunError> {
    let map = match v {
        Yaml::Null => return Ok(BTreeMap::new()),
        Yaml::Map(m) => m,
        other => {
            return Err(err(
                format!(
                    "invalid frontmatter: `models` must be a map of role labels, got {} (line {}, column {})",
                    type_name(other),
                    pos.0,
                    pos.1
                ),
                pos,
            ))
        }
    };
    let mut out = BTreeMap::new();
    for (k, spec) in map {
        let label = alias_key(k, "role label", "models", pos)?;
        let spec = match spec {
            Yaml::Null => crate::obj!({}),
            Yaml::Map(_) => yaml_to_json(spec, &format!("the spec of role `{label}`"), pos)?,
            other => {
                return Err(err(
                    format!(
                        "invalid frontmatter: the spec of role `{label}` must be a map, got {} (line {}, column {})",
                        type_name(other),
                        pos.0,
                        pos.1
                    ),
                    pos,
                ))
            }
        };
        out.insert(label, spec);
    }
    Ok(out)
}

fn parse_args(v: &Yaml, pos: (usize, usize)) -> Result<BTreeMap<String, serde_json::Value>, RunError> {
    let map = match v {
        Yaml::Map(m) => m,
        other => {
            return Err(err(
                format!(
                    "invalid frontmatter: `args` must be a map of argument names, got {} (line {}, column {})",
                    type_name(other),
                    pos.0,
                    pos.1
                ),
                pos,
            ))
        }
    };
    let mut out = BTreeMap::new();
    for (k, decl) in map {
        let name = alias_key(k, "argument name", "args", pos)?;
        let decl = yaml_to_json(decl, &format!("the declaration of argument `{name}`"), pos)?;
        let ty = decl.get("type").and_then(|t| t.as_str());
        const TYPES: &[&str] = &["string", "number", "integer", "boolean", "object", "array", "null"];
        if !matches!(ty, Some(t) if TYPES.contains(&t)) {
            return Err(err(
                format!(
                    "invalid frontmatter: argument `{name}` needs a JSON type, such as {{ type: string }} (line {}, column {})",
                    pos.0, pos.1
                ),
                pos,
            ));
        }
        out.insert(name, decl);
    }
    Ok(out)
}

/// `uses:` entries: one segment (a bare Pack id, `runvil/<id>`) or `vendor/name`.
fn parse_uses(v: &Yaml, text: &str, first_line: usize, pos: (usize, usize)) -> Result<Vec<String>, RunError> {
    const EXPECTED: &str = "expected a Pack id, such as `web`, or vendor/name, such as `acme/web`";
    let items = match v {
        Yaml::Null => return Ok(vec![]),
        Yaml::Seq(items) => items,
        _ => return Err(err(format!("invalid frontmatter: `uses` must be a list: {EXPECTED} (line {}, column {})", pos.0, pos.1), pos)),
    };
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let entry = match item {
            Yaml::Str(s) => s.clone(),
            other => {
                return Err(err(
                    format!(
                        "invalid frontmatter: invalid uses entry ({}): {EXPECTED} (line {}, column {})",
                        type_name(other),
                        pos.0,
                        pos.1
                    ),
                    pos,
                ))
            }
        };
        if let Some(reason) = uses_entry_error(&entry) {
            let at = entry_position(text, first_line, "uses", &entry);
            return Err(err(format!("invalid frontmatter: invalid uses entry `{entry}`: {reason} (line {}, column {})", at.0, at.1), at));
        }
        out.push(entry);
    }
    // A run holds one Pack per Pack id, so `web` and `acme/web` clash.
    for (i, e) in out.iter().enumerate() {
        let id = pack_id(e);
        if out[..i].iter().any(|p| pack_id(p) == id) {
            return Err(RunError::new(
                RunErrorKind::Frontmatter,
                format!("invalid frontmatter: Pack id {id} is declared more than once under uses"),
            ));
        }
    }
    Ok(out)
}
