//! What the Engine needs from whoever runs it: an observer for events, a clock, cancellation,
//! a way to give the event loop a turn, and the model functions bound to roles. The wasm bridge
//! implements it over JavaScript callbacks; native tests implement it in Rust.

use futures::future::LocalBoxFuture;
use serde_json::Value as Json;

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
    /// Whether a model function is bound to this role.
    fn has_model(&self, role: &str, spec: &Json) -> bool;
    /// Calls the model bound to `role` with a request
    /// (`{ role, spec, messages, tools, section, turn }`) and returns its reply object, or a
    /// model-safe failure message.
    fn call_model(&self, role: &str, spec: &Json, request: Json) -> LocalBoxFuture<'static, Result<Json, String>>;
}
