//! A run, start to finish: prepare (parse, requirements, seed), the H1 pass, the walk, and the
//! run result. Hosts call [`run`]; everything it needs from them goes through [`Host`].

pub mod block;

use serde_json::{json, Value as Json};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::effects::context::{Chain, RunShared};
pub use crate::effects::context::{Limits, Ui};
use crate::effects::events::Event;
use crate::effects::memory::{json_size, Held, Meter};
use crate::effects::models;
use crate::error::{RunError, RunErrorKind, REQUIREMENTS_NOTICE};
use crate::host::Host;
use crate::store::view::Store;
use crate::store::{Backend, Change, MemoryBackend, Opened};
use crate::time;
pub use block::EntryEnd;
use futures::future::LocalBoxFuture;

/// What a host passes for one run.
#[derive(Clone, Default)]
pub struct RunOptions {
    pub args: String,
    pub seed: u64,
    /// Host overrides; `None` fields fall back to the prompt's frontmatter, then the defaults.
    pub limits: LimitOverrides,
    pub ui: Ui,
    /// The host's store; `None` gives the run a fresh, empty memory store.
    pub store: Option<Rc<dyn Backend>>,
}

#[derive(Debug, Clone, Default)]
pub struct LimitOverrides {
    pub instructions: Option<u64>,
    pub memory_bytes: Option<usize>,
    pub max_tool_iterations: Option<u64>,
    pub fanout_concurrency: Option<u64>,
}

/// Runs `source` to its outcome: `Ok(Some(text))`, `Ok(None)` (the walk ran out without a
/// return), or the run error. Emits `run_started` first and `run_finished` last.
pub async fn run(source: &str, options: RunOptions, host: Rc<dyn Host>) -> Result<Option<String>, RunError> {
    let execution = time::execution_id(options.seed);
    let started = Event::RunStarted.as_str();
    host.emit(json!({
        "event": started, "type": started, "section": null,
        "seed": options.seed.to_string(), "execution": execution,
    }));
    let result = prepare_and_run(source, options, host.clone(), execution).await;
    let finished = match &result {
        Ok(r) => crate::obj!({ "ok": true, "result": r }),
        Err(e) => json!({ "ok": false, "error": { "kind": e.kind.as_str(), "message": e.message } }),
    };
    let finished_event = Event::RunFinished.as_str();
    let mut event = json!({ "event": finished_event, "type": finished_event, "section": null });
    if let (Json::Object(ev), Json::Object(f)) = (&mut event, finished) {
        ev.extend(f);
    }
    host.emit(event);
    result
}

async fn prepare_and_run(source: &str, options: RunOptions, host: Rc<dyn Host>, execution: String) -> Result<Option<String>, RunError> {
    let prompt = crate::parse::parse_prompt(source)?;
    let defaults = Limits::default();
    let o = &options.limits;
    let limits = Limits {
        instructions: o.instructions.unwrap_or(defaults.instructions),
        memory_bytes: o.memory_bytes.unwrap_or(defaults.memory_bytes),
        max_tool_iterations: o.max_tool_iterations.or(prompt.front.max_tool_iterations).unwrap_or(defaults.max_tool_iterations),
        fanout_concurrency: o.fanout_concurrency.unwrap_or(defaults.fanout_concurrency),
    };
    // Without `args:` the implicit declaration wraps the string; with one, argv is its JSON
    // parse, nil when it does not parse or is null (`001`, "When argv is nil").
    let argv = match &prompt.front.args {
        None => Some(crate::obj!({ "prose": options.args })),
        Some(_) => serde_json::from_str::<Json>(&options.args).ok().filter(|j| !j.is_null()),
    };
    // The store opens before anything runs: a failing backend fails the run, never a silent
    // throwaway store.
    let backend: Rc<dyn Backend> = options.store.clone().unwrap_or_else(|| Rc::new(MemoryBackend::default()));
    // Every backend call races the host's cancellation: a backend that never answers cannot
    // hold a cancelled run (a batch is sent whole or not at all; only the wait is given up).
    let backend: Rc<dyn Backend> = Rc::new(Abortable { inner: backend, host: host.clone() });
    let store = Store::open(backend).await.map_err(|detail| backend_failure(&*host, detail))?;
    let host_packs = host.packs();
    let (catalog, pack_lines) = crate::tools::catalog::build(&prompt.front.uses, &host_packs);
    let memory = Meter::new(limits.memory_bytes);
    let run = Rc::new(RunShared {
        catalog,
        host_packs,
        store: store.clone(),
        started: time::rfc3339(host.now_ms()),
        nonce: time::nonce(options.seed),
        execution,
        seed: options.seed,
        prompt,
        host,
        limits,
        ui: options.ui,
        last_id: Cell::new(0),
        stop: RefCell::new(None),
        default_role: RefCell::new(None),
        memory,
    });
    let mut unmet = pack_lines;
    unmet.extend(models::unmet_requirements(&run));
    unmet.extend(run.prompt.front.input.iter().filter(|p| !store.has_file(p)).map(|p| format!("- missing input file: {p}")));
    if !unmet.is_empty() {
        return Err(RunError::new(RunErrorKind::RequirementsUnmet, format!("{REQUIREMENTS_NOTICE}\n{}", unmet.join("\n"))));
    }
    run.check_cancelled();
    if let Some(stop) = run.stop.borrow().clone() {
        return Err(stop);
    }
    let var = crate::obj!({});
    // `var` counts against the memory ceiling from its first `{}` (`docs/language.md`).
    if let Err(refused) = run.memory.charge(Held::Var, json_size(&var) as i64) {
        return Err(RunError::new(
            RunErrorKind::Limit,
            format!("memory ceiling of {} bytes exceeded: {}", refused.ceiling, refused.describe()),
        ));
    }
    let chain = Rc::new(Chain { id: "0".into(), args: options.args, argv: RefCell::new(argv), var: Rc::new(RefCell::new(var)) });
    let result = walk(&run, &chain).await;
    // Every write the run made is in the backend before the run ends, success or failure.
    let flushed = store.flush().await.map_err(|detail| backend_failure(&*run.host, detail));
    let result = result.and_then(|r| flushed.map(|()| r))?;
    if let Some(missing) = run.prompt.front.output.iter().find(|p| !store.has_file(p)) {
        return Err(RunError::new(RunErrorKind::Vfs, format!("output file not written: {missing}")));
    }
    Ok(result)
}

/// A store backend failure as the run error: `Cancelled` when the host cancelled the run (the
/// backend's wait was given up), else `Vfs`.
pub fn backend_failure(host: &dyn Host, detail: String) -> RunError {
    if host.is_cancelled() {
        RunError::new(RunErrorKind::Cancelled, "the run was cancelled")
    } else {
        RunError::new(RunErrorKind::Vfs, format!("store backend failure: {detail}"))
    }
}

/// The run's backend, each call raced against the host's cancellation.
struct Abortable {
    inner: Rc<dyn Backend>,
    host: Rc<dyn Host>,
}

impl Abortable {
    fn race<T: 'static>(&self, work: LocalBoxFuture<'static, Result<T, String>>) -> LocalBoxFuture<'static, Result<T, String>> {
        let cancelled = self.host.cancelled();
        Box::pin(async move {
            match futures::future::select(work, cancelled).await {
                futures::future::Either::Left((answer, _)) => answer,
                futures::future::Either::Right(_) => Err("the run was cancelled while the store backend was answering".into()),
            }
        })
    }
}

impl Backend for Abortable {
    fn open(&self) -> LocalBoxFuture<'static, Result<Opened, String>> {
        self.race(self.inner.open())
    }
    fn read(&self, path: &str) -> LocalBoxFuture<'static, Result<Option<Vec<u8>>, String>> {
        self.race(self.inner.read(path))
    }
    fn commit(&self, changes: Vec<Change>) -> LocalBoxFuture<'static, Result<(), String>> {
        self.race(self.inner.commit(changes))
    }
}

/// The main walk: the H1 pass, then the top-level sections in file order, skipping off-walk
/// ones, until a block returns. (Jumps and child-level walks arrive with control flow; they
/// extend this loop, they do not fork it.)
async fn walk(run: &Rc<RunShared>, chain: &Rc<Chain>) -> Result<Option<String>, RunError> {
    if let EntryEnd::Returned(result) = block::run_entry(run, chain, None, None).await? {
        return Ok(Some(result));
    }
    for &i in &run.prompt.top {
        if run.prompt.sections[i].off_walk {
            continue;
        }
        if let EntryEnd::Returned(result) = block::run_entry(run, chain, Some(i), None).await? {
            return Ok(Some(result));
        }
    }
    Ok(None)
}
