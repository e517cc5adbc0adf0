//! What the Engine needs from whoever runs it: an observer for events, a clock, cancellation,
//! a way to give the event loop a turn, and the model functions bound to roles. The wasm bridge
//! implements it over JavaScript callbacks; native tests implement it in Rust.

use futures::future::LocalBoxFuture;
use serde_json::Value as Json;
use std::rc::Rc;

pub use crate::tools::catalog::{PackSpec, ToolSpec, Unavailable};
use crate::tools::Record;

/// Why a host callback answered nothing the engine can use.
#[derive(Debug, Clone, PartialEq)]
pub enum HostError {
    /// A model-safe failure message.
    Failed(String),
    /// The answer is this many bytes, more than the run's memory ceiling can hold: the host
    /// refused it before copying it into the engine (docs/reliability.md, "Memory at the edge").
    TooLarge(u64),
}

impl From<String> for HostError {
    fn from(message: String) -> Self {
        HostError::Failed(message)
    }
}

/// What a refused answer was, as the memory ceiling's error names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incoming {
    ModelReply,
    ToolResult,
    StoreFile,
}

impl Incoming {
    pub fn name(self) -> &'static str {
        match self {
            Incoming::ModelReply => "a model reply",
            Incoming::ToolResult => "a tool result",
            Incoming::StoreFile => "a store file",
        }
    }
}

/// One `models.loop` round's request, before it becomes JSON.
///
/// A conversation only grows (records are appended, never changed or removed) and its tool list is
/// fixed for a loop, so a host that keeps its own copy of a conversation, keyed by
/// `conversation`, needs only the records past what it already holds and the tool list when it is
/// a different one (`Rc::ptr_eq`). That is what keeps a round's cost independent of the history's
/// length across the wasm boundary (`docs/bridge.md`, "Conversations"). A host without such a
/// copy sends [`ModelRequest::to_json`], the whole request.
pub struct ModelRequest<'a> {
    pub role: &'a str,
    pub spec: &'a Json,
    pub section: &'a str,
    /// The chain (`0`, `0.1`, ...) and the entry (`sys.id`) the round belongs to.
    pub chain: &'a str,
    pub entry: u64,
    pub turn: u64,
    /// Unique within the run; the host may drop its copy at [`Host::end_conversation`].
    pub conversation: u64,
    /// The whole conversation so far (the engine's records are the truth).
    pub messages: &'a [Record],
    /// The tools this round advertises, as their wire JSON array; `None` when it offers none.
    pub tools: Option<&'a Rc<Json>>,
}

impl ModelRequest<'_> {
    /// The request as one JSON object (`{ role, spec, messages, tools, section, turn }`).
    pub fn to_json(&self) -> Json {
        let mut request = crate::obj!({
            "role": self.role, "spec": self.spec, "section": self.section, "turn": self.turn,
            "chain": self.chain, "entry": self.entry,
        });
        request["messages"] = Json::Array(self.messages.iter().map(Record::to_wire).collect());
        if let Some(tools) = self.tools {
            request["tools"] = (**tools).clone();
        }
        request
    }
}

pub trait Host {
    /// Observes one run event (`{ event, type, section, ... }`). Cannot change the run.
    fn emit(&self, event: Json);
    /// Milliseconds since the Unix epoch: the engine's own clock (the work budget's turns).
    fn now_ms(&self) -> f64;
    /// The clock the prompt sees (`sys.now`, the run's start time), read by `chain`: kept apart
    /// from [`Host::now_ms`] so that a host can record and replay it without touching the budget.
    fn clock_ms(&self, chain: &str) -> f64 {
        let _ = chain;
        self.now_ms()
    }
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
    /// Whether anyone observes the run's events: events that would copy large data (tool
    /// results, tool-call arguments) are built only when one does.
    fn observed(&self) -> bool {
        true
    }
    /// Whether a model function is bound to this role.
    fn has_model(&self, role: &str, spec: &Json) -> bool;
    /// Calls the model bound to `role` with a request
    /// (`{ role, spec, messages, tools, section, turn }`) and returns its reply object, or a
    /// model-safe failure message.
    fn call_model(&self, role: &str, spec: &Json, request: Json) -> LocalBoxFuture<'static, Result<Json, HostError>>;
    /// Calls the model bound to `request.role` for one `models.loop` round. A host that keeps
    /// conversations on its side overrides this to ship only what is new (see [`ModelRequest`]);
    /// the default sends the whole request through [`Host::call_model`].
    fn call_model_round(&self, request: ModelRequest<'_>) -> LocalBoxFuture<'static, Result<Json, HostError>> {
        self.call_model(request.role, request.spec, request.to_json())
    }
    /// The conversation `id` has ended (its section entry finished): a host's copy can go.
    fn end_conversation(&self, id: u64) {
        let _ = id;
    }
    /// The Packs this host serves (its Pack registry). `subagents` is always added by the engine.
    fn packs(&self) -> Vec<PackSpec> {
        Vec::new()
    }
    /// Runs one tool of the host's Pack `pack` (an index into [`Host::packs`]) and returns its
    /// output text (structured tools answer JSON text), or a model-safe failure message.
    /// `request` holds `tool` (the id), `name` (the name the call used), `arguments`, `callId`,
    /// `caller` (`model` or `script`), `section`, `chain`, `entry` and `origin`.
    fn call_tool(&self, pack: usize, tool: &str, request: Json) -> LocalBoxFuture<'static, Result<String, HostError>> {
        let _ = (pack, request);
        let tool = tool.to_string();
        Box::pin(async move { Err(format!("the host has no tool {tool}").into()) })
    }
}
