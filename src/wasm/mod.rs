//! The JS bridge: the only module that knows about JavaScript. It turns the wrapper's options
//! into [`RunOptions`] and a [`JsHost`], runs the engine, and answers with a plain outcome
//! object (docs/bridge.md). It never rejects for a prompt's own failure.

mod check;
mod host;
mod options;
mod store;
mod wasi_shim;

use js_sys::{Promise, Reflect};
use serde_json::Value as Json;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

use crate::engine::{LimitOverrides, RunOptions, Ui};
use crate::error::RunError;
use host::JsHost;
use options::{run_option, LimitKey, RunKey, UiKey};

extern "C" {
    fn __wasm_call_ctors();
}

#[wasm_bindgen(start)]
fn start() {
    // C constructors of the Lua/libc objects; without this call the linker would wrap every
    // export in constructor calls.
    unsafe { __wasm_call_ctors() };
}

#[wasm_bindgen(js_name = engineVersion)]
pub fn engine_version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Runs one prompt. `options` follows docs/bridge.md.
#[wasm_bindgen(js_name = runPrompt)]
pub fn run_prompt(source: String, options: JsValue) -> Promise {
    wasm_bindgen_futures::future_to_promise(async move {
        let seed_text = run_option(&options, RunKey::Seed).as_string().unwrap_or_default();
        let outcome = match seed_text.parse::<u64>() {
            Err(_) => failure_outcome(
                &RunError::new(crate::error::RunErrorKind::Parse, format!("invalid seed {seed_text:?}: expected a decimal u64")),
                &seed_text,
            ),
            Ok(seed) => {
                let run_options = RunOptions {
                    args: run_option(&options, RunKey::Args).as_string().unwrap_or_default(),
                    seed,
                    limits: limits(&run_option(&options, RunKey::Limits)),
                    ui: ui(&run_option(&options, RunKey::Ui)),
                    store: {
                        let s = run_option(&options, RunKey::Store);
                        (!s.is_undefined()).then(|| Rc::new(store::JsBackend::new(s)) as Rc<dyn crate::store::Backend>)
                    },
                };
                let host = Rc::new(JsHost::new(&options));
                match crate::engine::run(&source, run_options, host).await {
                    Ok(result) => crate::obj!({ "ok": true, "result": result, "seed": seed_text }),
                    Err(e) => failure_outcome(&e, &seed_text),
                }
            }
        };
        Ok(to_js(&outcome))
    })
}

fn failure_outcome(e: &RunError, seed: &str) -> Json {
    let mut error = crate::obj!({ "kind": e.kind.as_str(), "message": e.message });
    if let Some(line) = e.line {
        error["line"] = Json::from(line);
    }
    if let Some(column) = e.column {
        error["column"] = Json::from(column);
    }
    if let Some(section) = &e.section {
        error["section"] = Json::from(section.clone());
    }
    crate::obj!({ "ok": false, "error": error, "seed": seed })
}

pub(crate) fn get(obj: &JsValue, key: &str) -> JsValue {
    if obj.is_object() || obj.is_function() {
        Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

/// JSON data as plain JS values. A small array or object crosses as its JSON text, parsed by
/// `JSON.parse` in one call; a larger one is built value by value, each string copied out of the
/// module once, where its whole JSON text would first be written out in wasm memory (a large
/// tool-call argument or tool result, in a request or an event). Either way the values are those
/// `JSON.parse` makes of the value's text: `Object.fromEntries` defines each key as an own
/// property (`__proto__` too), in the same order, and a number is the same nearest double.
pub(crate) fn to_js(value: &Json) -> JsValue {
    match value {
        Json::Null => JsValue::NULL,
        Json::Bool(b) => JsValue::from_bool(*b),
        Json::Number(n) => JsValue::from_f64(n.as_f64().unwrap_or(0.0)),
        Json::String(s) => JsValue::from_str(s),
        Json::Array(_) | Json::Object(_) => match short_text(value).map(|text| js_sys::JSON::parse(&text)) {
            Some(Ok(parsed)) => parsed,
            _ => structured(value),
        },
    }
}

/// The most bytes of JSON text a value crosses as (`to_js`). Building a value by value costs
/// several boundary calls per key or item, more than writing and parsing a short text.
const SHORT_TEXT_BYTES: usize = 4096;

/// `value`'s JSON text when it has at most [`SHORT_TEXT_BYTES`] bytes; writing stops there.
fn short_text(value: &Json) -> Option<String> {
    struct Capped(Vec<u8>);
    impl std::io::Write for Capped {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if self.0.len() + bytes.len() > SHORT_TEXT_BYTES {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            self.0.extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut out = Capped(Vec::new());
    serde_json::to_writer(&mut out, value).ok()?;
    String::from_utf8(out.0).ok()
}

/// An array or object built value by value (its members through [`to_js`]).
fn structured(value: &Json) -> JsValue {
    match value {
        Json::Array(items) => items.iter().map(to_js).collect::<js_sys::Array>().into(),
        Json::Object(map) => {
            let entries: js_sys::Array = map.iter().map(|(k, v)| js_sys::Array::of2(&JsValue::from_str(k), &to_js(v))).collect();
            js_sys::Object::from_entries(&entries).map_or(JsValue::NULL, JsValue::from)
        }
        scalar => to_js(scalar),
    }
}

/// A JS value as JSON data; `None` when it has no JSON form (functions, cycles, BigInt).
pub(crate) fn from_js(value: &JsValue) -> Option<Json> {
    if value.is_undefined() {
        return None;
    }
    let text = js_sys::JSON::stringify(value).ok()?.as_string()?;
    crate::json_text::parse_str(&text).ok()
}

fn limits(v: &JsValue) -> LimitOverrides {
    let num = |k: LimitKey| get(v, k.key()).as_f64().filter(|n| n.is_finite() && *n >= 0.0);
    LimitOverrides {
        instructions: num(LimitKey::Instructions).map(|n| n as u64),
        memory_bytes: num(LimitKey::MemoryBytes).map(|n| n as usize),
        max_tool_iterations: num(LimitKey::MaxToolIterations).map(|n| n as u64),
        fanout_concurrency: num(LimitKey::FanoutConcurrency).map(|n| n as u64),
        section_entries: num(LimitKey::SectionEntries).map(|n| n as u64),
    }
}

fn ui(v: &JsValue) -> Ui {
    let default = Ui::default();
    Ui {
        kind: get(v, UiKey::Kind.key()).as_string().unwrap_or(default.kind),
        interactive: get(v, UiKey::Interactive.key()).as_bool().unwrap_or(default.interactive),
    }
}

/// Test hook: traps the instance, as a Rust panic would (`panic = "abort"`), so the wrapper's
/// recovery can be tested against the real module. The wrapper exposes it only under a
/// `Symbol.for('runvil.debugTrap')` key.
#[wasm_bindgen(js_name = debugTrap)]
pub fn debug_trap() {
    core::arch::wasm32::unreachable()
}
