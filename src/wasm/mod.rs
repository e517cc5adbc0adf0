//! TEMPORARY skeleton of the JS bridge, replaced by the real engine bridge. Exists only so
//! the packaging work can start against the export interface in docs/bridge.md.
mod wasi_shim;
use wasm_bindgen::prelude::*;

extern "C" {
    fn __wasm_call_ctors();
}

#[wasm_bindgen(start)]
fn start() {
    unsafe { __wasm_call_ctors() };
}

#[wasm_bindgen(js_name = engineVersion)]
pub fn engine_version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

#[wasm_bindgen(js_name = runPrompt)]
pub fn run_prompt(source: String, options: JsValue) -> js_sys::Promise {
    let _ = options;
    wasm_bindgen_futures::future_to_promise(async move {
        let lua = mlua::Lua::new();
        let out = js_sys::Object::new();
        match lua.load(&source).eval::<String>() {
            Ok(s) => {
                js_sys::Reflect::set(&out, &"ok".into(), &true.into())?;
                js_sys::Reflect::set(&out, &"result".into(), &s.into())?;
            }
            Err(e) => {
                let err = js_sys::Object::new();
                js_sys::Reflect::set(&err, &"kind".into(), &"Lua".into())?;
                js_sys::Reflect::set(&err, &"message".into(), &e.to_string().into())?;
                js_sys::Reflect::set(&out, &"ok".into(), &false.into())?;
                js_sys::Reflect::set(&out, &"error".into(), &err)?;
            }
        }
        Ok(out.into())
    })
}
