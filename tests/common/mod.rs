//! A native host for engine tests: records events and model requests, answers models from
//! scripts, serves Packs whose tools answer from Rust closures, and can be cancelled.
#![allow(dead_code)]

pub mod case_packs;

use futures::future::LocalBoxFuture;
use runvil::host::HostError;
use runvil::{Host, RunError, RunOptions};
use serde_json::{json, Value as Json};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

/// A host tool's call function, like a JS Pack tool's `call`: it gets the call request (see
/// [`Host::call_tool`]) and answers the output text or a model-safe failure message.
/// A run's outcome: its result text, no result, or the run error.
pub type Outcome = Result<Option<String>, RunError>;

pub type ToolCall = Rc<dyn Fn(&Json) -> LocalBoxFuture<'static, Result<String, String>>>;

#[derive(Default)]
pub struct TestHost {
    pub events: RefCell<Vec<Json>>,
    /// Says no one observes the run's events (`Host::observed`), as a wasm host without an
    /// observer does.
    pub unobserved: Cell<bool>,
    pub cancelled: Cell<bool>,
    /// Cancel once this many slices have yielded (a stand-in for a timer firing).
    pub cancel_after_yields: Cell<Option<u32>>,
    pub yields: Cell<u32>,
    /// Scripted replies per role, as `scriptedModel` plays them: a JSON string is the reply
    /// `{ content, finish_reason: "stop" }`, an object a full reply.
    pub replies: RefCell<HashMap<String, Vec<Json>>>,
    /// How many replies each role has played.
    pub replies_used: RefCell<HashMap<String, usize>>,
    /// Every model request, in order, across roles.
    pub requests: RefCell<Vec<Json>>,
    /// The host's Packs. A tool runs its `tool_calls` entry (keyed by Pack index and the tool's
    /// own name) when it has one; else it answers from `tool_answers` by its id, or echoes its
    /// arguments.
    pub packs: RefCell<Vec<runvil::host::PackSpec>>,
    pub tool_calls: RefCell<HashMap<(usize, String), ToolCall>>,
    pub tool_answers: RefCell<HashMap<String, Result<String, String>>>,
    pub tool_requests: RefCell<Vec<Json>>,
    /// When set, every model reply waits this many executor turns (see [`yields`]) first:
    /// seeded latencies that reorder concurrent chains.
    pub model_latency: RefCell<Option<Box<dyn FnMut() -> u64>>>,
    /// Fires the abort signal once this many model requests have been made.
    pub cancel_after_requests: Cell<Option<usize>>,
    /// The abort signal as [`Host::cancelled`] watches it; set it with [`TestHost::fire_abort`].
    pub abort: Rc<Cell<bool>>,
    /// Who waits on the abort signal: woken when it fires, as a real host's abort promise wakes
    /// only then (a future that polled the flag on every executor turn would also poll everything
    /// else, and hide a wake-up the engine lost).
    abort_wakers: Rc<RefCell<Vec<std::task::Waker>>>,
}

/// Completes after being polled `n` more times, waking itself each time: a stand-in for a timer
/// that lets every other ready future run first (what matters in tests is ordering, not time).
pub fn yields(n: u64) -> impl Future<Output = ()> {
    struct Yields(u64);
    impl Future for Yields {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 == 0 {
                return Poll::Ready(());
            }
            self.0 -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
    Yields(n)
}

impl TestHost {
    /// Fires the abort signal: every [`Host::cancelled`] future resolves.
    pub fn fire_abort(&self) {
        self.abort.set(true);
        for waker in self.abort_wakers.borrow_mut().drain(..) {
            waker.wake();
        }
    }

    /// Binds `role` to a scripted model.
    pub fn model(&self, role: &str, replies: Vec<Json>) {
        self.replies.borrow_mut().insert(role.to_string(), replies);
    }
}

impl Host for TestHost {
    fn observed(&self) -> bool {
        !self.unobserved.get()
    }
    fn emit(&self, event: Json) {
        self.events.borrow_mut().push(event);
    }
    fn now_ms(&self) -> f64 {
        1_796_070_661_000.0
    }
    fn is_cancelled(&self) -> bool {
        self.cancelled.get() || self.abort.get()
    }
    fn cancelled(&self) -> LocalBoxFuture<'static, ()> {
        let (abort, wakers) = (self.abort.clone(), self.abort_wakers.clone());
        let already = self.cancelled.get();
        Box::pin(futures::future::poll_fn(move |cx| {
            if already || abort.get() {
                Poll::Ready(())
            } else {
                wakers.borrow_mut().push(cx.waker().clone());
                Poll::Pending
            }
        }))
    }
    fn yield_now(&self) -> LocalBoxFuture<'static, ()> {
        self.yields.set(self.yields.get() + 1);
        if let Some(n) = self.cancel_after_yields.get() {
            if self.yields.get() >= n {
                self.cancelled.set(true);
            }
        }
        // One executor turn, as a host's macrotask would give the other tasks.
        Box::pin(yields(1))
    }
    fn sleep(&self, ms: f64) -> LocalBoxFuture<'static, ()> {
        sleep(ms)
    }
    fn has_model(&self, role: &str, _spec: &Json) -> bool {
        self.replies.borrow().contains_key(role)
    }
    fn call_model(&self, role: &str, _spec: &Json, request: Json) -> LocalBoxFuture<'static, Result<Json, HostError>> {
        self.requests.borrow_mut().push(request);
        if self.cancel_after_requests.get().is_some_and(|n| self.requests.borrow().len() >= n) {
            self.fire_abort();
        }
        let reply = {
            let mut replies = self.replies.borrow_mut();
            let mut used = self.replies_used.borrow_mut();
            let used = used.entry(role.to_string()).or_default();
            match replies.get_mut(role) {
                None => Err(format!("no model is bound to the role {role}")),
                Some(list) if list.is_empty() => Err(format!("scripted model has no reply left ({used} used)")),
                Some(list) => {
                    *used += 1;
                    Ok(list.remove(0))
                }
            }
        };
        let delay = self.model_latency.borrow_mut().as_mut().map_or(0, |f| f());
        Box::pin(async move {
            yields(delay).await;
            reply
                .map(|r| match r {
                    Json::String(text) => json!({ "content": text, "finish_reason": "stop" }),
                    other => other,
                })
                .map_err(HostError::Failed)
        })
    }
    fn packs(&self) -> Vec<runvil::host::PackSpec> {
        self.packs.borrow().clone()
    }
    fn call_tool(&self, pack: usize, tool: &str, request: Json) -> LocalBoxFuture<'static, Result<String, HostError>> {
        self.tool_requests.borrow_mut().push(request.clone());
        let call = self.tool_calls.borrow().get(&(pack, tool.to_string())).cloned();
        if let Some(call) = call {
            let answer = call(&request);
            return Box::pin(async move { answer.await.map_err(HostError::Failed) });
        }
        let id = request["tool"].as_str().unwrap_or_default().to_string();
        let answer = self.tool_answers.borrow().get(&id).cloned().unwrap_or_else(|| Ok(request["arguments"].to_string()));
        Box::pin(async move { answer.map_err(HostError::Failed) })
    }
}

pub fn run_with(host: Rc<TestHost>, source: &str, args: &str, configure: impl FnOnce(&mut RunOptions)) -> Result<Option<String>, RunError> {
    let mut options = RunOptions { args: args.to_string(), seed: 42, ..Default::default() };
    configure(&mut options);
    futures::executor::block_on(runvil::run(source, options, host))
}

pub fn run(source: &str, args: &str) -> Result<Option<String>, RunError> {
    run_with(Rc::new(TestHost::default()), source, args, |_| {})
}

/// The run result text; panics with the run error otherwise.
pub fn result(source: &str, args: &str) -> String {
    match run(source, args) {
        Ok(Some(text)) => text,
        Ok(None) => panic!("the run returned no result"),
        Err(e) => panic!("the run failed: {e}"),
    }
}

pub fn error(source: &str, args: &str) -> RunError {
    match run(source, args) {
        Ok(r) => panic!("the run succeeded with {r:?}"),
        Err(e) => e,
    }
}

/// A prompt with the usual frontmatter around a body.
pub fn prompt(body: &str) -> String {
    format!("---\nname: t\ndescription: test\nrunvil: 0\n---\n\n# T\n\n{body}")
}

/// Runs `source` against a host-supplied memory store seeded with `files` (read-only when asked)
/// and returns the outcome with the store's files after the run, sorted by path.
pub fn run_with_store(source: &str, args: &str, files: Vec<(String, Vec<u8>)>, read_only: bool) -> (Outcome, Vec<(String, Vec<u8>)>) {
    let backend = Rc::new(runvil::store::MemoryBackend::new(files, read_only));
    let store: Rc<dyn runvil::store::Backend> = backend.clone();
    let outcome = run_with(Rc::new(TestHost::default()), source, args, |options| options.store = Some(store));
    (outcome, backend.snapshot())
}

/// A real timer for native tests: a thread that wakes the waiting future.
pub fn sleep(ms: f64) -> LocalBoxFuture<'static, ()> {
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(ms as u64));
        let _ = tx.send(());
    });
    Box::pin(async move {
        let _ = rx.await;
    })
}
