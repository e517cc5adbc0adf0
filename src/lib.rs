//! Runvil: the engine of a prompt-programming language. A prompt is a Markdown file whose
//! `lua` blocks run in sandboxed Lua 5.5 VMs; see docs/architecture.md for the layout.
//!
//! The engine (`parse`, `prompt`, `subst`, `engine`, `lua`) is plain Rust and builds and tests
//! natively; `wasm` is the only module that knows about JavaScript.

pub mod engine;
pub mod error;
pub mod host;
pub mod lua;
pub mod parse;
pub mod prompt;
pub mod store;
pub mod subst;
pub mod tools;

#[cfg(target_arch = "wasm32")]
mod wasm;

pub use engine::{run, LimitOverrides, RunOptions};
pub use error::{RunError, RunErrorKind};
pub use host::Host;
