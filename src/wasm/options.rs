//! The keys of the options object the wrapper hands `runPrompt` (docs/bridge.md, `BridgeOptions`),
//! each spelled once: Rust reads an option through its variant, and `bridgeKeys()` lists every
//! key, so a package test holds js/core/engine.js and docs/bridge.md to the same list and a misspelt
//! key cannot be read as a silent default.

use js_sys::Array;
use wasm_bindgen::prelude::*;

macro_rules! keys {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $key:literal,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $($variant,)*
        }

        impl $name {
            const ALL: &'static [$name] = &[$($name::$variant),*];

            pub fn key(self) -> &'static str {
                match self {
                    $($name::$variant => $key,)*
                }
            }
        }
    };
}

keys! {
    /// The options of one run.
    RunKey {
        Args = "args",
        Seed = "seed",
        Models = "models",
        OnEvent = "onEvent",
        Signal = "signal",
        Limits = "limits",
        Ui = "ui",
        YieldNow = "yieldNow",
        Packs = "packs",
        Store = "store",
        Conversations = "conversations",
        Clock = "clock",
    }
}

keys! {
    /// The fields of `limits`.
    LimitKey {
        Instructions = "instructions",
        MemoryBytes = "memoryBytes",
        MaxToolIterations = "maxToolIterations",
        FanoutConcurrency = "fanoutConcurrency",
        SectionEntries = "sectionEntries",
    }
}

keys! {
    /// The fields of `ui`.
    UiKey {
        Kind = "kind",
        Interactive = "interactive",
    }
}

/// The option `key` of the run's options object.
pub fn run_option(options: &JsValue, key: RunKey) -> JsValue {
    super::get(options, key.key())
}

fn list(keys: impl Iterator<Item = &'static str>) -> Array {
    keys.map(JsValue::from_str).collect()
}

/// Every key Rust reads, by object: `{ run, limits, ui }` (test hook for the package tests).
#[wasm_bindgen(js_name = bridgeKeys)]
pub fn bridge_keys() -> JsValue {
    let out = js_sys::Object::new();
    let set = |name: &str, keys: Array| {
        let _ = js_sys::Reflect::set(&out, &JsValue::from_str(name), &keys);
    };
    set("run", list(RunKey::ALL.iter().map(|k| k.key())));
    set("limits", list(LimitKey::ALL.iter().map(|k| k.key())));
    set("ui", list(UiKey::ALL.iter().map(|k| k.key())));
    out.into()
}
