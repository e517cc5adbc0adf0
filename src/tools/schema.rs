//! A tool call's arguments checked against the tool's declared parameters before any handler or
//! Pack function runs, so a model that sends `"two"` for a number gets a failed call naming the
//! argument and what was expected, and can retry (docs/language.md, "Tool arguments").
//!
//! The parameters are JSON Schema. What is checked is the subset tool schemas use: `type` (one
//! name or a list; `integer` is a number without a fraction), `enum`, `const`, `properties`,
//! `required`, `additionalProperties` (`false` or a schema), `items`, `minItems`/`maxItems`,
//! `minLength`/`maxLength` (in characters), `minimum`/`maximum`/`exclusiveMinimum`/
//! `exclusiveMaximum` (numbers), `anyOf`/`oneOf`/`allOf`, OpenAPI's `nullable`, and the boolean
//! schemas `true` and `false`. Every other keyword (`format`, `pattern`, `$ref`, ...) is an
//! annotation here: it is passed to the model and not checked.

use serde_json::{Map, Value as Json};

/// Nesting the check follows, in the schema and in the value: deeper is accepted unchecked.
const MAX_DEPTH: usize = 64;

/// Which arguments a check holds the call to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Required {
    /// Every `required` argument must be there (local tools: the prompt declared each one).
    Enforced,
    /// A missing argument is left to the tool: the language sends `{}` as the empty-argument call
    /// every Pack tool accepts, and a Pack names what it misses in its own words. The arguments
    /// that are there are still checked.
    LeftToTheTool,
}

/// `Ok` when `value` fits `schema`, else why not: the first mismatch, naming where it is.
pub fn check(schema: &Json, value: &Json, required: Required) -> Result<(), String> {
    Checker { required }.at(schema, value, &mut Vec::new())
}

struct Checker {
    required: Required,
}

/// One step into the value, for messages: `items[2].name`.
enum Step {
    Key(String),
    Index(usize),
}

fn place(path: &[Step]) -> String {
    if path.is_empty() {
        return "the arguments".into();
    }
    let mut s = String::from("argument '");
    for (i, step) in path.iter().enumerate() {
        match step {
            Step::Key(k) if i == 0 => s.push_str(k),
            Step::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Step::Index(n) => s.push_str(&format!("[{n}]")),
        }
    }
    s.push('\'');
    s
}

/// The value as a message shows it: its kind and, shortened, its JSON.
fn shown(value: &Json) -> String {
    let kind = match value {
        Json::Null => return "null".into(),
        Json::Bool(_) => "the boolean",
        Json::Number(_) => "the number",
        Json::String(_) => "the string",
        Json::Array(_) => return "an array".into(),
        Json::Object(_) => return "an object".into(),
    };
    let mut text = value.to_string();
    if text.chars().count() > 40 {
        text = text.chars().take(40).collect::<String>() + "...";
    }
    format!("{kind} {text}")
}

fn fits_type(name: &str, value: &Json) -> bool {
    match name {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.as_i64().is_some() || value.as_u64().is_some() || value.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        // A type this check does not know is not held against the value.
        _ => true,
    }
}

fn with_article(name: &str) -> String {
    match name {
        "array" | "integer" | "object" => format!("an {name}"),
        "null" => "null".into(),
        other => format!("a {other}"),
    }
}

impl Checker {
    fn at(&self, schema: &Json, value: &Json, path: &mut Vec<Step>) -> Result<(), String> {
        let s = match schema {
            Json::Bool(true) => return Ok(()),
            Json::Bool(false) => return Err(format!("{} is not allowed", place(path))),
            Json::Object(s) => s,
            _ => return Ok(()),
        };
        if path.len() > MAX_DEPTH {
            return Ok(());
        }
        if value.is_null() && s.get("nullable") == Some(&Json::Bool(true)) {
            return Ok(());
        }
        Self::check_type(s, value, path)?;
        if let Some(Json::Array(options)) = s.get("enum") {
            if !options.contains(value) {
                let listed: Vec<String> = options.iter().map(Json::to_string).collect();
                return Err(format!("{} must be one of {}, got {}", place(path), listed.join(", "), shown(value)));
            }
        }
        if let Some(want) = s.get("const") {
            if want != value {
                return Err(format!("{} must be {want}, got {}", place(path), shown(value)));
            }
        }
        match value {
            Json::Object(members) => self.object(s, members, path)?,
            Json::Array(items) => self.array(s, items, path)?,
            Json::String(text) => Self::check_length(s, text, path)?,
            Json::Number(_) => Self::check_range(s, value, path)?,
            _ => {}
        }
        self.combinations(s, value, path)
    }

    fn check_type(s: &Map<String, Json>, value: &Json, path: &[Step]) -> Result<(), String> {
        let names: Vec<&str> = match s.get("type") {
            Some(Json::String(t)) => vec![t.as_str()],
            Some(Json::Array(ts)) => ts.iter().filter_map(Json::as_str).collect(),
            _ => return Ok(()),
        };
        if names.is_empty() || names.iter().any(|t| fits_type(t, value)) {
            return Ok(());
        }
        let wanted: Vec<String> = names.iter().map(|t| with_article(t)).collect();
        Err(format!("{} must be {}, got {}", place(path), wanted.join(" or "), shown(value)))
    }

    fn object(&self, s: &Map<String, Json>, members: &Map<String, Json>, path: &mut Vec<Step>) -> Result<(), String> {
        let properties = s.get("properties").and_then(Json::as_object);
        if let (Some(Json::Array(required)), Required::Enforced) = (s.get("required"), self.required) {
            for name in required.iter().filter_map(Json::as_str) {
                if !members.contains_key(name) {
                    path.push(Step::Key(name.to_string()));
                    let expected = properties.and_then(|p| p.get(name)).and_then(|p| p.get("type")).and_then(Json::as_str);
                    let what = expected.map(|t| format!(" ({})", with_article(t))).unwrap_or_default();
                    let message = format!("{} is required{what} and missing", place(path));
                    path.pop();
                    return Err(message);
                }
            }
        }
        for (name, member) in members {
            path.push(Step::Key(name.to_string()));
            let result = match (properties.and_then(|p| p.get(name)), s.get("additionalProperties")) {
                (Some(property), _) => self.at(property, member, path),
                (None, Some(Json::Bool(false))) => {
                    let known: Vec<&str> = properties.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                    Err(format!("{} is not a parameter of this tool (its parameters: {})", place(path), known.join(", ")))
                }
                (None, Some(extra @ Json::Object(_))) => self.at(extra, member, path),
                (None, _) => Ok(()),
            };
            path.pop();
            result?;
        }
        Ok(())
    }

    fn array(&self, s: &Map<String, Json>, items: &[Json], path: &mut Vec<Step>) -> Result<(), String> {
        let count = |key: &str| s.get(key).and_then(Json::as_u64);
        if let Some(min) = count("minItems").filter(|&m| (items.len() as u64) < m) {
            return Err(format!("{} must have at least {min} items, got {}", place(path), items.len()));
        }
        if let Some(max) = count("maxItems").filter(|&m| (items.len() as u64) > m) {
            return Err(format!("{} must have at most {max} items, got {}", place(path), items.len()));
        }
        if let Some(item_schema) = s.get("items").filter(|i| i.is_object() || i.is_boolean()) {
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                let result = self.at(item_schema, item, path);
                path.pop();
                result?;
            }
        }
        Ok(())
    }

    fn check_length(s: &Map<String, Json>, text: &str, path: &[Step]) -> Result<(), String> {
        let chars = text.chars().count() as u64;
        if let Some(min) = s.get("minLength").and_then(Json::as_u64).filter(|&m| chars < m) {
            return Err(format!("{} must be at least {min} characters long, got {chars}", place(path)));
        }
        if let Some(max) = s.get("maxLength").and_then(Json::as_u64).filter(|&m| chars > m) {
            return Err(format!("{} must be at most {max} characters long, got {chars}", place(path)));
        }
        Ok(())
    }

    fn check_range(s: &Map<String, Json>, value: &Json, path: &[Step]) -> Result<(), String> {
        let Some(n) = value.as_f64() else { return Ok(()) };
        let bound = |key: &str| s.get(key).and_then(Json::as_f64);
        let refused = [
            ("minimum", bound("minimum").filter(|&b| n < b), "at least"),
            ("maximum", bound("maximum").filter(|&b| n > b), "at most"),
            ("exclusiveMinimum", bound("exclusiveMinimum").filter(|&b| n <= b), "more than"),
            ("exclusiveMaximum", bound("exclusiveMaximum").filter(|&b| n >= b), "less than"),
        ];
        for (key, hit, words) in refused {
            if hit.is_some() {
                return Err(format!("{} must be {words} {}, got {value}", place(path), s[key]));
            }
        }
        Ok(())
    }

    fn combinations(&self, s: &Map<String, Json>, value: &Json, path: &mut Vec<Step>) -> Result<(), String> {
        if let Some(Json::Array(all)) = s.get("allOf") {
            for sub in all {
                self.at(sub, value, path)?;
            }
        }
        for (key, exactly_one) in [("anyOf", false), ("oneOf", true)] {
            let Some(Json::Array(options)) = s.get(key) else { continue };
            if options.is_empty() {
                continue;
            }
            let mut first_reason = None;
            let mut matched = 0;
            for option in options {
                match self.at(option, value, path) {
                    Ok(()) => matched += 1,
                    Err(reason) => {
                        first_reason.get_or_insert(reason);
                    }
                }
            }
            if matched == 0 {
                let reason = first_reason.unwrap_or_default();
                return Err(format!("{}: none of the {} allowed forms fits (the first: {reason})", place(path), options.len()));
            }
            if exactly_one && matched > 1 {
                return Err(format!("{}: {matched} of the forms oneOf allows fit, not exactly one", place(path)));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(schema: Json, value: Json) -> String {
        check(&schema, &value, Required::Enforced).unwrap_err()
    }

    #[test]
    fn types_required_and_extra_arguments() {
        let s = json!({"type": "object", "properties": {"count": {"type": "number"}, "name": {"type": "string"}}, "required": ["count"]});
        assert_eq!(check(&s, &json!({"count": 2}), Required::Enforced), Ok(()));
        assert_eq!(err(s.clone(), json!({"count": "two"})), "argument 'count' must be a number, got the string \"two\"");
        assert_eq!(err(s.clone(), json!({})), "argument 'count' is required (a number) and missing");
        // A Pack tool names what it misses itself; what is there is still checked.
        assert_eq!(check(&s, &json!({}), Required::LeftToTheTool), Ok(()));
        assert!(check(&s, &json!({"count": "two"}), Required::LeftToTheTool).is_err());
        assert_eq!(err(s.clone(), json!([1])), "the arguments must be an object, got an array");
        // Extra arguments pass unless the schema closes the object.
        assert_eq!(check(&s, &json!({"count": 1, "extra": true}), Required::Enforced), Ok(()));
        let closed = json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
        assert_eq!(err(closed, json!({"b": 1})), "argument 'b' is not a parameter of this tool (its parameters: a)");
    }

    #[test]
    fn integers_enums_ranges_and_nesting() {
        let s = json!({"type": "object", "properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 10},
            "mode": {"enum": ["fast", "slow"]},
            "items": {"type": "array", "maxItems": 2, "items": {"type": "object", "properties": {"id": {"type": ["string", "null"]}}}}
        }});
        assert_eq!(check(&s, &json!({"n": 3.0, "mode": "fast", "items": [{"id": null}, {"id": "x"}]}), Required::Enforced), Ok(()));
        assert_eq!(err(s.clone(), json!({"n": 2.5})), "argument 'n' must be an integer, got the number 2.5");
        assert_eq!(err(s.clone(), json!({"n": 11})), "argument 'n' must be at most 10, got 11");
        assert_eq!(
            err(s.clone(), json!({"mode": "medium"})),
            "argument 'mode' must be one of \"fast\", \"slow\", got the string \"medium\""
        );
        assert_eq!(err(s.clone(), json!({"items": [{"id": 1}]})), "argument 'items[0].id' must be a string or null, got the number 1");
        assert_eq!(err(s, json!({"items": [1, 2, 3]})), "argument 'items' must have at most 2 items, got 3");
    }

    #[test]
    fn combinations_booleans_and_annotations() {
        let any = json!({"anyOf": [{"type": "string"}, {"type": "number"}]});
        assert_eq!(check(&any, &json!(1), Required::Enforced), Ok(()));
        assert_eq!(
            err(any, json!(true)),
            "the arguments: none of the 2 allowed forms fits (the first: the arguments must be a string, got the boolean true)"
        );
        assert_eq!(check(&json!(true), &json!({"x": 1}), Required::Enforced), Ok(()));
        assert_eq!(err(json!({"properties": {"x": false}}), json!({"x": 1})), "argument 'x' is not allowed");
        // Keywords outside the subset are annotations.
        assert_eq!(check(&json!({"type": "string", "pattern": "^a", "format": "uri"}), &json!("b"), Required::Enforced), Ok(()));
        assert_eq!(check(&json!({"type": "string", "nullable": true}), &json!(null), Required::Enforced), Ok(()));
    }
}
