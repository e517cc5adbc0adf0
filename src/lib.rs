//! Runvil: the engine of a prompt-programming language. A prompt is a Markdown file whose
//! `lua` blocks run in sandboxed Lua 5.5 VMs; see docs/architecture.md for the layout.
//!
//! The engine (`parse`, `prompt`, `subst`, `store`, `tools`, `effects`, `lua`, `engine`) is plain Rust and builds and tests
//! natively; `wasm` is the only module that knows about JavaScript.

/// A JSON object from `"key": value` pairs whose values convert with `Json::from`: unlike
/// `serde_json::json!`, it never goes through serde's serializer, whose per-type copies cost
/// module size (the gzip budget: docs/performance.md). Values are cloned, like `json!` takes
/// references.
#[macro_export]
macro_rules! obj {
    ({ $($k:literal : $v:expr),* $(,)? }) => {{
        #[allow(unused_mut)]
        let mut m = serde_json::Map::new();
        $( m.insert($k.to_string(), serde_json::Value::from(($v).clone())); )*
        serde_json::Value::Object(m)
    }};
}

pub mod check;
pub mod effects;
pub mod engine;
pub mod error;
pub mod float_text;
pub mod host;
pub mod ids;
pub mod json_text;
pub mod lua;
pub mod parse;
pub mod prompt;
pub mod seed_ids;
mod small_alloc;
pub mod sort;
pub mod store;
pub mod subst;
pub mod time;
pub mod tools;
pub mod untrusted;

#[cfg(target_arch = "wasm32")]
mod wasm;

/// Every allocation goes through the small-block cache (`small_alloc` says why).
#[global_allocator]
static ALLOCATOR: small_alloc::SmallAlloc = small_alloc::SmallAlloc::new();

pub use engine::{run, LimitOverrides, RunOptions};
pub use error::{RunError, RunErrorKind};
pub use host::Host;
