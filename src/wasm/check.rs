//! `checkPrompt`: the static check (`crate::check`) for the wrapper's `engine.check`.

use wasm_bindgen::prelude::*;

use super::host::{array, pack_spec};

/// Every static error of `source`, as JSON text: an array of `{ severity, kind, message, line,
/// column, section }`. `packs`: the host's Pack objects (or `undefined`: no Pack checks).
#[wasm_bindgen(js_name = checkPrompt)]
pub fn check_prompt(source: String, packs: JsValue) -> String {
    let packs = (!packs.is_undefined()).then(|| array(&packs).iter().map(pack_spec).collect::<Vec<_>>());
    let found = crate::check::check(&source, packs.as_deref());
    serde_json::Value::Array(found.iter().map(crate::check::Diagnostic::to_json).collect()).to_string()
}
