//! A spec case's Packs (`pack:` lines, `spec-tests/README.md`) for the native [`TestHost`]. The JS
//! runner (`pkg-tests/spec.test.mjs`) builds each Pack as a JS object (`caseTool`, or the package's
//! `webPack` / `userInputPack` for `{"ref": ...}`) and the bridge turns it into a
//! [`PackSpec`] (`src/wasm/host.rs`, `pack_spec`) and its tools' answers into text
//! (`JsHost::call_tool`). Here the same description becomes the same `PackSpec`, and each tool a
//! [`ToolCall`] that answers what that JS `call` answers, as the bridge passes it on: a string as
//! it is, `null` as `""`, any other value as `JSON.stringify` text, a thrown Error as its message
//! (its `cause` stays hidden).
//!
//! One difference cannot be helped: serde_json keeps an object's keys sorted, so a non-string
//! `result` (or `results` entry, or search answer) holding an object comes out with its keys sorted,
//! where `JSON.stringify` keeps the case file's order. Write such objects with sorted keys.
//!
//! The two reference Packs mirror `js/packs/reference.js` (their text and their `call` behaviour for the
//! runner's `fetch`, `search` and `ask` stand-ins); [`REFERENCE_TEXTS`] lists the strings that must
//! appear verbatim in that file, so the copies cannot drift apart unnoticed.

use super::{yields, TestHost, ToolCall};
use futures::future::LocalBoxFuture;
use runvil::host::{PackSpec, ToolSpec, Unavailable};
use serde_json::{json, Value as Json};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Replaces `<NONCE>` in every string of `value` (object keys are kept), like the JS runner's
/// `withNonce`.
pub fn with_nonce(value: &Json, nonce: &str) -> Json {
    match value {
        Json::String(s) => Json::String(s.replace("<NONCE>", nonce)),
        Json::Array(items) => Json::Array(items.iter().map(|v| with_nonce(v, nonce)).collect()),
        Json::Object(map) => Json::Object(map.iter().map(|(k, v)| (k.clone(), with_nonce(v, nonce))).collect()),
        other => other.clone(),
    }
}

/// `JSON.stringify` of JSON data as the bridge hands it to JS: an object's keys come in JS order
/// (array-index keys ascending, then the rest in the order serde_json keeps, which is sorted), and
/// an integral number has no fraction (`1`, not `1.0`).
pub fn js_stringify(value: &Json) -> String {
    match value {
        Json::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or_default();
            if f.fract() == 0.0 && f.abs() < 1e21 {
                format!("{}", f as i128)
            } else {
                n.to_string()
            }
        }
        Json::Array(items) => format!("[{}]", items.iter().map(js_stringify).collect::<Vec<_>>().join(",")),
        Json::Object(map) => {
            let index = |k: &str| k.parse::<u32>().ok().filter(|i| *i != u32::MAX && i.to_string() == k);
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by_key(|k| index(k).map_or((1, 0), |i| (0, i)));
            let fields: Vec<String> =
                keys.iter().map(|k| format!("{}:{}", Json::from(k.as_str()), js_stringify(&map[k.as_str()]))).collect();
            format!("{{{}}}", fields.join(","))
        }
        other => other.to_string(),
    }
}

/// What a JS tool's return value becomes through the bridge.
fn output_text(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        Json::Null => String::new(),
        other => js_stringify(other),
    }
}

/// The text of `new Error(value).message`.
fn error_message(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        other => js_stringify(other),
    }
}

fn text(v: &Json, key: &str) -> String {
    v.get(key).and_then(Json::as_str).unwrap_or_default().to_string()
}

/// The PackSpec the bridge makes of a JS Pack object (`src/wasm/host.rs`, `pack_spec`).
pub fn pack_spec(p: &Json) -> PackSpec {
    let unavailable = match p.get("unavailable") {
        Some(Json::String(reason)) => Some(Unavailable::Reason(reason.clone())),
        Some(u @ (Json::Object(_) | Json::Array(_))) => {
            Some(Unavailable::Needs { service: text(u, "needs"), reason: u.get("reason").and_then(Json::as_str).map(String::from) })
        }
        _ => None,
    };
    let tools = p.get("tools").and_then(Json::as_array).map(Vec::as_slice).unwrap_or_default();
    let tools = tools
        .iter()
        .map(|t| ToolSpec {
            name: text(t, "name"),
            description: text(t, "description"),
            parameters: t.get("parameters").cloned().unwrap_or(Json::Null),
            trusted: t.get("trust").and_then(Json::as_str) == Some("trusted"),
            structured: t.get("output").and_then(Json::as_str) == Some("structured"),
        })
        .collect();
    PackSpec {
        name: text(p, "name"),
        description: text(p, "description"),
        tools,
        prelude: p.get("prelude").and_then(Json::as_str).map(String::from),
        unavailable,
    }
}

/// Adds a case's Pack (a `pack:` line's JSON) to the host, after the Packs it already serves.
pub fn add_pack(host: &TestHost, desc: &Json, nonce: &str) -> Result<(), String> {
    let (pack, calls): (Json, Vec<(String, ToolCall)>) = match desc.get("ref") {
        None => {
            let tools = desc.get("tools").and_then(Json::as_array).cloned().unwrap_or_default();
            (desc.clone(), tools.iter().map(|t| (text(t, "name"), case_tool(t, nonce))).collect())
        }
        Some(r) if r == "web" => web_pack(desc, nonce),
        Some(r) if r == "user-input" => user_input_pack(desc),
        Some(other) => return Err(format!("unknown reference Pack {other}")),
    };
    let index = host.packs.borrow().len();
    host.packs.borrow_mut().push(pack_spec(&pack));
    let mut table = host.tool_calls.borrow_mut();
    // Like the bridge's lookup by name, the first tool of a name answers.
    for (name, call) in calls.into_iter().rev() {
        table.insert((index, name), call);
    }
    Ok(())
}

/// A tool of a case's own Pack (the JS runner's `caseTool`): after `delay` (here that many
/// yields), it throws `error`, echoes its arguments, reports its context, answers the next of
/// `results` (the last one repeating) or `result`.
fn case_tool(desc: &Json, nonce: &str) -> ToolCall {
    let desc = Rc::new(desc.clone());
    let nonce = nonce.to_string();
    let next = Rc::new(Cell::new(0usize));
    Rc::new(move |request: &Json| {
        let (desc, nonce, next, request) = (desc.clone(), nonce.clone(), next.clone(), request.clone());
        Box::pin(async move {
            let truthy = |k: &str| desc.get(k).is_some_and(|v| !matches!(v, Json::Null | Json::Bool(false)) && v != 0 && v != "");
            let delay = desc.get("delay").and_then(Json::as_f64).unwrap_or(0.0);
            if delay > 0.0 {
                yields(delay as u64).await;
            }
            let args = request.get("arguments").cloned().unwrap_or(Json::Null);
            if let Some(error) = desc.get("error") {
                return Err(error_message(&with_nonce(error, &nonce)));
            }
            if truthy("echo") {
                return Ok(js_stringify(&args));
            }
            if truthy("context") {
                let field = |k: &str| request.get(k).cloned().unwrap_or(Json::Null);
                let call_id = match field("callId") {
                    Json::Null => json!(""),
                    id => id,
                };
                return Ok(format!(
                    "{{\"args\":{},\"caller\":{},\"callId\":{},\"section\":{}}}",
                    js_stringify(&args),
                    js_stringify(&field("caller")),
                    js_stringify(&call_id),
                    js_stringify(&field("section"))
                ));
            }
            let answer = match desc.get("results").and_then(Json::as_array) {
                Some(results) if !results.is_empty() => {
                    let k = next.get();
                    next.set(k + 1);
                    results[k.min(results.len() - 1)].clone()
                }
                Some(_) => Json::Null,
                None => desc.get("result").cloned().unwrap_or(Json::Null),
            };
            // Only a string answer has `<NONCE>` replaced, as in the JS runner.
            Ok(match answer {
                Json::String(s) => s.replace("<NONCE>", &nonce),
                other => output_text(&other),
            })
        }) as LocalBoxFuture<'static, Result<String, String>>
    })
}

/// `USER_INPUT_PRELUDE` of `js/packs/reference.js`.
const USER_INPUT_PRELUDE: &str = "local pack = ...
input = {}
function input.ask(...)
  if select('#', ...) > 0 then
    error(\"input.ask takes no arguments\", 2)
  end
  return tools.call(pack .. \"/ask\")
end
";

const USER_INPUT_DESCRIPTION: &str = "Ask the operator and wait for the answer.";
const ASK_DESCRIPTION: &str = "Wait for the operator's next message and answer with its text.";
const NO_ANSWERS: &str = "the case scripted no more operator answers";
const WEB_DESCRIPTION: &str = "Search the web and fetch pages.";
const FETCH_DESCRIPTION: &str = "Fetch a web page and return its text.";
const URL_DESCRIPTION: &str = "The page address.";
const SEARCH_DESCRIPTION: &str = "Search the web and return a list of results (title, url, description).";
const QUERY_DESCRIPTION: &str = "What to search for.";
const NO_URL: &str = "web_fetch: missing url argument";
const NO_QUERY: &str = "web_search: missing query argument";

/// Strings of the reference Packs that `js/packs/reference.js` must hold verbatim (and
/// `pkg-tests/spec.test.mjs`, for [`NO_ANSWERS`]).
pub const REFERENCE_TEXTS: &[&str] = &[
    USER_INPUT_PRELUDE,
    USER_INPUT_DESCRIPTION,
    ASK_DESCRIPTION,
    WEB_DESCRIPTION,
    FETCH_DESCRIPTION,
    URL_DESCRIPTION,
    SEARCH_DESCRIPTION,
    QUERY_DESCRIPTION,
    NO_URL,
    NO_QUERY,
    "answered ${response.status}",
    "name: 'user-input'",
    "name: 'web'",
    "name: 'ask'",
    "name: 'fetch'",
    "name: 'search'",
];

/// `userInputPack({ ask })` with the runner's `ask`: the case's `answers` in order; an
/// `{ "error", "cause"? }` entry throws (the cause hidden), and no answer left throws too.
fn user_input_pack(desc: &Json) -> (Json, Vec<(String, ToolCall)>) {
    let pack = json!({
        "name": "user-input",
        "description": USER_INPUT_DESCRIPTION,
        "tools": [{
            "name": "ask",
            "description": ASK_DESCRIPTION,
            "parameters": { "type": "object", "properties": {} },
            "trust": "trusted",
            "output": "plain",
        }],
        "prelude": USER_INPUT_PRELUDE,
    });
    let answers = Rc::new(RefCell::new(desc.get("answers").and_then(Json::as_array).cloned().unwrap_or_default()));
    let ask: ToolCall = Rc::new(move |_request: &Json| {
        let answer = {
            let mut answers = answers.borrow_mut();
            (!answers.is_empty()).then(|| answers.remove(0))
        };
        Box::pin(async move {
            match answer {
                None => Err(NO_ANSWERS.to_string()),
                Some(Json::String(text)) => Ok(text),
                // `new Error(a.error)`: no `error` field makes an empty message.
                Some(a) => Err(a.get("error").map(error_message).unwrap_or_default()),
            }
        })
    });
    (pack, vec![("ask".to_string(), ask)])
}

/// `webPack({ fetch, search })` with the runner's stand-ins: `fetch` answers the case's `pages`
/// (`200 text/plain`, so the text comes back as it is) and 404 for any other URL; `search`
/// answers the case's `search` value.
fn web_pack(desc: &Json, nonce: &str) -> (Json, Vec<(String, ToolCall)>) {
    let string_param = |name: &str, description: &str| json!({ "type": "object", "properties": { name: { "type": "string", "description": description } }, "required": [name] });
    let pack = json!({
        "name": "web",
        "description": WEB_DESCRIPTION,
        "tools": [
            { "name": "fetch", "description": FETCH_DESCRIPTION, "parameters": string_param("url", URL_DESCRIPTION), "trust": "untrusted", "output": "plain" },
            { "name": "search", "description": SEARCH_DESCRIPTION, "parameters": string_param("query", QUERY_DESCRIPTION), "trust": "untrusted", "output": "plain" },
        ],
    });
    let pages = Rc::new(with_nonce(desc.get("pages").unwrap_or(&json!({})), nonce));
    let fetch: ToolCall = Rc::new(move |request: &Json| {
        let url = request["arguments"].get("url").and_then(Json::as_str).filter(|u| !u.is_empty()).map(String::from);
        let answer = match url {
            None => Err(NO_URL.to_string()),
            Some(url) => match pages.get(&url) {
                Some(page) => Ok(output_text(page)),
                None => Err(format!("web_fetch: {url} answered 404")),
            },
        };
        Box::pin(async move { answer })
    });
    // `search: async () => desc.search ?? []`
    let results = desc.get("search").filter(|s| !s.is_null()).cloned().unwrap_or(json!([]));
    let search: ToolCall = Rc::new(move |request: &Json| {
        let query = request["arguments"].get("query").and_then(Json::as_str).filter(|q| !q.is_empty());
        let answer = match (query, &results) {
            (None, _) => Err(NO_QUERY.to_string()),
            (Some(_), Json::Array(items)) => {
                // `({ title, url, description }) => ({ title, url, description })`: absent fields stay out.
                let items: Vec<String> = items
                    .iter()
                    .map(|item| {
                        let fields: Vec<String> = ["title", "url", "description"]
                            .iter()
                            .filter_map(|k| item.get(k).map(|v| format!("\"{k}\":{}", js_stringify(v))))
                            .collect();
                        format!("{{{}}}", fields.join(","))
                    })
                    .collect();
                Ok(format!("[{}]", items.join(",")))
            }
            (Some(_), _) => Err("(results ?? []).map is not a function".to_string()),
        };
        Box::pin(async move { answer })
    });
    (pack, vec![("fetch".to_string(), fetch), ("search".to_string(), search)])
}
