//! What the Engine needs from whoever runs it: an observer for events, a clock, cancellation,
//! a way to give the event loop a turn, and the model functions bound to roles. The wasm bridge
//! implements it over JavaScript callbacks; native tests implement it in Rust.

use futures::future::LocalBoxFuture;
use serde_json::Value as Json;

pub use crate::tools::catalog::{PackSpec, ToolSpec, Unavailable};

pub trait Host {
    /// Observes one run event (`{ event, type, section, ... }`). Cannot change the run.
    fn emit(&self, event: Json);
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> f64;
    /// Whether the caller's abort signal has fired.
    fn is_cancelled(&self) -> bool;
    /// Resolves when the abort signal fires (never, when there is none). Raced against every
    /// suspension so that cancellation interrupts a waiting model call.
    fn cancelled(&self) -> LocalBoxFuture<'static, ()>;
    /// Resolves on the host's next macrotask, so timers and abort events get a turn while a
    /// long Lua block runs.
    fn yield_now(&self) -> LocalBoxFuture<'static, ()>;
    /// Resolves after `ms` milliseconds (`tasks.join`'s `timeout_ms`).
    fn sleep(&self, ms: f64) -> LocalBoxFuture<'static, ()>;
    /// Whether a model function is bound to this role.
    fn has_model(&self, role: &str, spec: &Json) -> bool;
    /// Calls the model bound to `role` with a request
    /// (`{ role, spec, messages, tools, section, turn }`) and returns its reply object, or a
    /// model-safe failure message.
    fn call_model(&self, role: &str, spec: &Json, request: Json) -> LocalBoxFuture<'static, Result<Json, String>>;
    /// The Packs this host serves (its Pack registry). `subagents` is always added by the engine.
    fn packs(&self) -> Vec<PackSpec> {
        Vec::new()
    }
    /// Runs one tool of the host's Pack `pack` (an index into [`Host::packs`]) and returns its
    /// output text (structured tools answer JSON text), or a model-safe failure message.
    /// `request` holds `tool` (the id), `name` (the name the call used), `arguments`, `callId`,
    /// `caller` (`model` or `script`), `section` and `origin`.
    fn call_tool(&self, pack: usize, tool: &str, request: Json) -> LocalBoxFuture<'static, Result<String, String>> {
        let _ = (pack, request);
        let tool = tool.to_string();
        Box::pin(async move { Err(format!("the host has no tool {tool}")) })
    }
}
