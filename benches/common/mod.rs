//! What the benches share: a host with nothing behind it but an instant model.

use futures::future::LocalBoxFuture;
use runvil::Host;
use serde_json::Value as Json;

/// A host whose model answers `ok` at once and that offers nothing else: a bench measures the
/// engine alone.
pub struct InstantHost;

impl Host for InstantHost {
    fn emit(&self, _event: Json) {}
    fn observed(&self) -> bool {
        false
    }
    fn now_ms(&self) -> f64 {
        0.0
    }
    fn is_cancelled(&self) -> bool {
        false
    }
    fn cancelled(&self) -> LocalBoxFuture<'static, ()> {
        Box::pin(futures::future::pending())
    }
    fn yield_now(&self) -> LocalBoxFuture<'static, ()> {
        Box::pin(futures::future::ready(()))
    }
    fn sleep(&self, _ms: f64) -> LocalBoxFuture<'static, ()> {
        // No bench prompt waits on a timer.
        Box::pin(futures::future::pending())
    }
    fn has_model(&self, _role: &str, _spec: &Json) -> bool {
        true
    }
    fn call_model(&self, _role: &str, _spec: &Json, _request: Json) -> LocalBoxFuture<'static, Result<Json, runvil::host::HostError>> {
        Box::pin(futures::future::ready(Ok(serde_json::json!({ "content": "ok", "finish_reason": "stop" }))))
    }
}
