//! [`Host`] over the wrapper's JS callbacks: `onEvent`, the `AbortSignal`, `yieldNow`, and the
//! model functions.

use futures::future::{FutureExt, LocalBoxFuture, Shared};
use js_sys::{Function, Promise, Reflect};
use serde_json::Value as Json;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::options::{run_option, RunKey};
use super::{from_js, get, to_js};
use crate::host::{Host, HostError, ModelRequest, PackSpec, ToolSpec, Unavailable};

/// What the wrapper's copy of one conversation holds (js/core/conversations.js): how many records,
/// and which tool list. The next request ships only the records past `records`, and the tools
/// only when they are a different list.
struct Shipped {
    conversation: u64,
    records: usize,
    tools: Option<Rc<Json>>,
}

pub struct JsHost {
    on_event: Option<Function>,
    signal: JsValue,
    /// Resolves when the signal aborts: one wait on the signal per run, cloned for every
    /// suspension, rather than a `then` and two wasm-bindgen closures per suspension.
    aborted: Option<Shared<LocalBoxFuture<'static, ()>>>,
    yield_now: Option<Function>,
    /// The prompt's clock, `(chain) => ms` (`clock` in the bridge options).
    clock: Option<Function>,
    models: JsValue,
    /// Model functions already looked up, per role (the function form is asked once).
    bound: RefCell<Vec<(String, Option<Function>)>>,
    /// The host's Pack objects, as passed in `packs`.
    packs: Vec<JsValue>,
    /// The wrapper's conversation copies (`conversations` in the bridge options, docs/bridge.md);
    /// without it every round sends the whole request.
    conversations: Option<js_sys::Object>,
    request_fn: Option<Function>,
    end_fn: Option<Function>,
    /// One per conversation in flight (a handful: the entries running model rounds now), so a
    /// list is enough; a hash map cost about 2 KB of module code.
    shipped: RefCell<Vec<Shipped>>,
}

impl JsHost {
    pub fn new(options: &JsValue) -> Self {
        let signal = run_option(options, RunKey::Signal);
        let aborted = (!signal.is_undefined()).then(|| {
            let target = signal.clone();
            let promise = Promise::new(&mut |resolve, _| {
                if get(&target, "aborted").as_bool() == Some(true) {
                    let _ = resolve.call0(&JsValue::UNDEFINED);
                    return;
                }
                let opts = js_sys::Object::new();
                let _ = Reflect::set(&opts, &"once".into(), &true.into());
                if let Ok(add) = get(&target, "addEventListener").dyn_into::<Function>() {
                    let _ = add.call3(&target, &"abort".into(), &resolve, &opts);
                }
            });
            let fired = JsFuture::from(promise);
            let wait: LocalBoxFuture<'static, ()> = Box::pin(async move {
                let _ = fired.await;
            });
            wait.shared()
        });
        let conversations = run_option(options, RunKey::Conversations);
        let request_fn: Option<Function> = get(&conversations, "request").dyn_into().ok();
        let end_fn: Option<Function> = get(&conversations, "end").dyn_into().ok();
        JsHost {
            conversations: conversations.dyn_into().ok(),
            request_fn,
            end_fn,
            shipped: RefCell::new(Vec::new()),
            on_event: run_option(options, RunKey::OnEvent).dyn_into().ok(),
            signal,
            aborted,
            yield_now: run_option(options, RunKey::YieldNow).dyn_into().ok(),
            clock: run_option(options, RunKey::Clock).dyn_into().ok(),
            models: run_option(options, RunKey::Models),
            bound: RefCell::new(Vec::new()),
            packs: {
                let packs = run_option(options, RunKey::Packs);
                if js_sys::Array::is_array(&packs) {
                    js_sys::Array::from(&packs).iter().collect()
                } else {
                    Vec::new()
                }
            },
        }
    }

    fn model_fn(&self, role: &str, spec: &Json) -> Option<Function> {
        if let Some((_, found)) = self.bound.borrow().iter().find(|(r, _)| r == role) {
            return found.clone();
        }
        let found = if let Some(f) = self.models.dyn_ref::<Function>() {
            f.call2(&JsValue::UNDEFINED, &role.into(), &to_js(spec)).ok().and_then(|v| v.dyn_into::<Function>().ok())
        } else {
            get(&self.models, role).dyn_into::<Function>().ok()
        };
        self.bound.borrow_mut().push((role.to_string(), found.clone()));
        found
    }
}

/// The elements of a JS array; nothing for any other value (`Array::from` would throw).
pub(super) fn array(v: &JsValue) -> Vec<JsValue> {
    if js_sys::Array::is_array(v) {
        js_sys::Array::from(v).iter().collect()
    } else {
        Vec::new()
    }
}

/// A Pack object from JS (`Pack` in js/index.d.ts) as the engine's PackSpec.
pub(super) fn pack_spec(p: &JsValue) -> PackSpec {
    let text = |v: &JsValue, k: &str| get(v, k).as_string().unwrap_or_default();
    let unavailable = {
        let u = get(p, "unavailable");
        if let Some(reason) = u.as_string() {
            Some(Unavailable::Reason(reason))
        } else if u.is_object() {
            Some(Unavailable::Needs { service: text(&u, "needs"), reason: get(&u, "reason").as_string() })
        } else {
            None
        }
    };
    let tools = array(&get(p, "tools"))
        .into_iter()
        .map(|t| ToolSpec {
            name: text(&t, "name"),
            description: text(&t, "description"),
            parameters: from_js(&get(&t, "parameters")).unwrap_or(Json::Null),
            trusted: get(&t, "trust").as_string().as_deref() == Some("trusted"),
            structured: get(&t, "output").as_string().as_deref() == Some("structured"),
        })
        .collect();
    PackSpec { name: text(p, "name"), description: text(p, "description"), tools, prelude: get(p, "prelude").as_string(), unavailable }
}

/// A model-safe text for a thrown JS value. The wrapper guards every host callback (js/core/engine.js),
/// so this sees a string or an `Error` with a string message; it still never calls JS that can
/// throw past it (`get` catches) nor unwraps a non-string.
pub(crate) fn error_text(e: &JsValue) -> String {
    e.as_string().or_else(|| get(e, "message").as_string()).unwrap_or_else(|| "the host callback failed".into())
}

/// A host callback's rejection: the wrapper's refusal of an answer the memory ceiling cannot hold
/// (`{ tooLarge: bytes }`, js/core/crossing.js), else a failure message. Every other rejection
/// the wrapper passes on is an `Error` it made (js/core/engine.js, `guarded`).
pub(super) fn host_error(e: &JsValue) -> HostError {
    match get(e, "tooLarge").as_f64() {
        Some(bytes) if !e.is_instance_of::<js_sys::Error>() => HostError::TooLarge(bytes as u64),
        _ => HostError::Failed(error_text(e)),
    }
}

impl Host for JsHost {
    fn observed(&self) -> bool {
        self.on_event.is_some()
    }

    fn emit(&self, event: Json) {
        if let Some(f) = &self.on_event {
            // The observer cannot change the run: whatever it throws is ignored.
            let _ = f.call1(&JsValue::UNDEFINED, &to_js(&event));
        }
    }

    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }

    fn clock_ms(&self, chain: &str) -> f64 {
        let read = self.clock.as_ref().and_then(|f| f.call1(&JsValue::UNDEFINED, &chain.into()).ok());
        read.and_then(|v| v.as_f64()).filter(|ms| ms.is_finite()).unwrap_or_else(js_sys::Date::now)
    }

    fn is_cancelled(&self) -> bool {
        get(&self.signal, "aborted").as_bool() == Some(true)
    }

    fn cancelled(&self) -> LocalBoxFuture<'static, ()> {
        match &self.aborted {
            Some(aborted) => Box::pin(aborted.clone()),
            None => Box::pin(futures::future::pending()),
        }
    }

    fn yield_now(&self) -> LocalBoxFuture<'static, ()> {
        let promise = self.yield_now.as_ref().and_then(|f| f.call0(&JsValue::UNDEFINED).ok());
        Box::pin(async move {
            if let Some(p) = promise {
                let _ = JsFuture::from(Promise::resolve(&p)).await;
            }
        })
    }

    fn sleep(&self, ms: f64) -> LocalBoxFuture<'static, ()> {
        // Every runtime the package supports has a global `setTimeout`.
        let set_timeout: Option<Function> =
            js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("setTimeout")).ok().and_then(|f| f.dyn_into().ok());
        let promise = Promise::new(&mut |resolve, _reject| {
            if let Some(f) = &set_timeout {
                let _ = f.call2(&JsValue::UNDEFINED, &resolve, &JsValue::from_f64(ms));
            } else {
                let _ = resolve.call0(&JsValue::UNDEFINED);
            }
        });
        Box::pin(async move {
            let _ = JsFuture::from(promise).await;
        })
    }

    fn packs(&self) -> Vec<PackSpec> {
        self.packs.iter().map(pack_spec).collect()
    }

    fn call_tool(&self, pack: usize, tool: &str, request: Json) -> LocalBoxFuture<'static, Result<String, HostError>> {
        let found = self
            .packs
            .get(pack)
            .and_then(|p| array(&get(p, "tools")).into_iter().find(|t| get(t, "name").as_string().as_deref() == Some(tool)));
        let Some(t) = found else {
            let tool = tool.to_string();
            return Box::pin(async move { Err(format!("the host has no tool {tool}").into()) });
        };
        let Ok(call) = get(&t, "call").dyn_into::<Function>() else {
            return Box::pin(async { Err("the tool has no call function".to_string().into()) });
        };
        let ctx = js_sys::Object::new();
        for (k, v) in [
            ("signal", self.signal.clone()),
            ("section", to_js(&request["section"])),
            ("caller", to_js(&request["caller"])),
            ("callId", to_js(&request["callId"])),
            ("chain", to_js(&request["chain"])),
            ("entry", to_js(&request["entry"])),
            ("origin", to_js(&request["origin"])),
        ] {
            let _ = Reflect::set(&ctx, &k.into(), &v);
        }
        let called = call.call2(&t, &to_js(&request["arguments"]), &ctx);
        Box::pin(async move {
            let value = match called {
                Ok(v) => JsFuture::from(Promise::resolve(&v)).await.map_err(|e| host_error(&e))?,
                Err(e) => return Err(host_error(&e)),
            };
            // Plain tools answer text; a structured tool may answer a value, sent on as JSON text.
            match value.as_string() {
                Some(s) => Ok(s),
                None if value.is_undefined() || value.is_null() => Ok(String::new()),
                None => js_sys::JSON::stringify(&value)
                    .ok()
                    .and_then(|t| t.as_string())
                    .ok_or_else(|| "the tool's output is not JSON".to_string().into()),
            }
        })
    }

    fn has_model(&self, role: &str, spec: &Json) -> bool {
        self.model_fn(role, spec).is_some()
    }

    fn call_model(&self, role: &str, spec: &Json, request: Json) -> LocalBoxFuture<'static, Result<Json, HostError>> {
        let Some(f) = self.model_fn(role, spec) else { return unbound(role) };
        call_with(&f, to_js(&request), &self.signal)
    }

    fn call_model_round(&self, request: ModelRequest<'_>) -> LocalBoxFuture<'static, Result<Json, HostError>> {
        // The wrapper always passes its conversation copies (js/core/engine.js); the bridge has no
        // other caller, so there is no whole-request fallback to carry in the module.
        let (Some(conversations), Some(build)) = (&self.conversations, &self.request_fn) else {
            return Box::pin(async { Err("no conversations in the bridge options".to_string().into()) });
        };
        let Some(f) = self.model_fn(request.role, request.spec) else { return unbound(request.role) };
        let mut shipped = self.shipped.borrow_mut();
        let at = match shipped.iter().position(|s| s.conversation == request.conversation) {
            Some(at) => at,
            None => {
                shipped.push(Shipped { conversation: request.conversation, records: 0, tools: None });
                shipped.len() - 1
            }
        };
        let copy = &mut shipped[at];
        // Only what is new crosses the boundary: the records appended since the last request,
        // and the tool list when it is not the one the copy holds (`undefined` = unchanged).
        let appended = crate::tools::wire_text(&request.messages[copy.records..]);
        let same_tools = match (&copy.tools, request.tools) {
            (None, None) => true,
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            _ => false,
        };
        let tools = if same_tools {
            JsValue::UNDEFINED
        } else {
            JsValue::from_str(&request.tools.map_or_else(|| "null".to_string(), |t| t.to_string()))
        };
        let args = js_sys::Array::new();
        for arg in [
            JsValue::from_f64(request.conversation as f64),
            JsValue::from_f64(copy.records as f64),
            JsValue::from_str(&appended),
            tools,
            JsValue::from_str(request.role),
            JsValue::from_str(&request.spec.to_string()),
            JsValue::from_str(request.section),
            JsValue::from_f64(request.turn as f64),
            JsValue::from_str(request.chain),
            JsValue::from_f64(request.entry as f64),
        ] {
            args.push(&arg);
        }
        let req = match build.apply(conversations, &args) {
            Ok(req) => req,
            Err(e) => {
                let message = error_text(&e);
                return Box::pin(async move { Err(message.into()) });
            }
        };
        copy.records = request.messages.len();
        copy.tools = request.tools.cloned();
        drop(shipped);
        call_with(&f, req, &self.signal)
    }

    fn end_conversation(&self, id: u64) {
        let mut shipped = self.shipped.borrow_mut();
        if let Some(at) = shipped.iter().position(|s| s.conversation == id) {
            shipped.swap_remove(at);
            drop(shipped);
            if let (Some(conversations), Some(end)) = (&self.conversations, &self.end_fn) {
                let _ = end.call1(conversations, &JsValue::from_f64(id as f64));
            }
        }
    }
}

fn unbound(role: &str) -> LocalBoxFuture<'static, Result<Json, HostError>> {
    let role = role.to_string();
    Box::pin(async move { Err(format!("no model is bound to the role {role}").into()) })
}

/// Calls model function `f` with the request object `req` (which gets the run's `signal`) and
/// reads its reply: the reply's JSON text, as the wrapper answers it (js/core/crossing.js), or
/// any other value, read as JSON data.
fn call_with(f: &Function, req: JsValue, signal: &JsValue) -> LocalBoxFuture<'static, Result<Json, HostError>> {
    let _ = Reflect::set(&req, &"signal".into(), signal);
    let called = f.call1(&JsValue::UNDEFINED, &req);
    Box::pin(async move {
        let value = match called {
            Ok(v) => JsFuture::from(Promise::resolve(&v)).await.map_err(|e| host_error(&e))?,
            Err(e) => return Err(host_error(&e)),
        };
        // The text is dropped as soon as it is parsed: only the tree outlives this call.
        let reply = match value.as_string() {
            Some(text) => crate::json_text::parse_str(&text).ok(),
            None => from_js(&value),
        };
        match reply {
            None => Err("the model's reply is not a JSON object".to_string().into()),
            Some(j) if j.is_object() => Ok(j),
            Some(_) => Err("the model's reply is not an object".to_string().into()),
        }
    })
}
