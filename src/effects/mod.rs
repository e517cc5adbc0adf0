//! What a running entry does beyond pure Lua, as plain Rust that knows nothing of Lua: the state
//! it acts on (run, chain, entry), model roles and rounds, the `models.loop` protocol, and tool
//! calls through the host. The Lua bindings (`lua/`) marshal arguments into these functions and
//! their typed outcomes back into Lua values; the walk (`engine/`) creates the state.
//!
//! Layers point one way: `parse`, `store`, `subst`, `tools` below; `effects` on them; `lua` on
//! `effects`; `engine` on `lua`; `wasm` on top.

pub mod chains;
pub mod context;
pub mod conversation;
pub mod events;
pub mod identity;
pub mod memory;
pub mod models;
pub mod round;
pub mod task_builtins;
pub mod tasks;
pub mod tool_calls;

use crate::error::ErrorValueKind;

/// A step a prompt asked for that cannot happen: the error value the prompt gets (and can catch).
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub kind: ErrorValueKind,
    pub message: String,
    /// The tool name an `unbound_tool` or `out_of_scope_tool` error value carries as `name`.
    pub name: Option<String>,
}

impl Refusal {
    pub fn new(kind: ErrorValueKind, message: impl Into<String>) -> Self {
        Refusal { kind, message: message.into(), name: None }
    }

    pub fn lua(message: impl Into<String>) -> Self {
        Refusal::new(ErrorValueKind::Lua, message)
    }

    pub fn naming(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
    }
}
