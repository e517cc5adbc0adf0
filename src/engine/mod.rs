//! A run, start to finish: prepare (parse, requirements, seed), the H1 pass, the walk, and the
//! run result. Hosts call [`run`]; everything it needs from them goes through [`Host`].

pub mod block;

use serde_json::{json, Value as Json};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::future::LocalBoxFuture;

use crate::effects::chains::{self, parse_argv};
use crate::effects::context::{backend_failure, Chain, RunShared};
pub use crate::effects::context::{Limits, Ui};
use crate::effects::events::Event;
use crate::effects::identity::Identity;
use crate::effects::memory::{json_size, Held, Meter};
use crate::effects::models;
use crate::effects::tasks::{self, TaskPool};
use crate::error::{requirements_unmet, RunError, RunErrorKind};
use crate::host::Host;
use crate::store::claims::Clock;
use crate::store::view::Store;
use crate::store::{Backend, Change, MemoryBackend, Opened};
use crate::{seed_ids, time};
pub use block::EntryEnd;

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
    pub section_entries: Option<u64>,
}

/// Runs `source` to its outcome: `Ok(Some(text))`, `Ok(None)` (the walk ran out without a
/// return), or the run error. Emits `run_started` first and `run_finished` last.
pub async fn run(source: &str, options: RunOptions, host: Rc<dyn Host>) -> Result<Option<String>, RunError> {
    let execution = seed_ids::execution_id(options.seed);
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
        section_entries: o.section_entries.unwrap_or(defaults.section_entries),
    };
    let argv = parse_argv(&prompt, &options.args);
    // The store opens before anything runs: a failing backend fails the run, never a silent
    // throwaway store.
    let backend: Rc<dyn Backend> = options.store.clone().unwrap_or_else(|| Rc::new(MemoryBackend::default()));
    // Every backend call races the host's cancellation: a backend that never answers cannot
    // hold a cancelled run (a batch is sent whole or not at all; only the wait is given up).
    let backend: Rc<dyn Backend> = Rc::new(Abortable { inner: backend, host: host.clone() });
    let store = Store::open(backend).await.map_err(|detail| backend_failure(&*host, detail))?;
    let host_packs = host.packs();
    let (catalog, pack_lines) = crate::tools::catalog::build(&prompt.front.uses, &host_packs);
    let run = Rc::new(RunShared {
        catalog,
        host_packs,
        store: store.clone(),
        started: time::rfc3339(host.clock_ms("0")),
        last_turn_ms: Cell::new(host.now_ms()),
        nonce: seed_ids::nonce(options.seed),
        execution,
        seed: options.seed,
        prompt,
        host,
        limits,
        ui: options.ui,
        last_id: Cell::new(0),
        last_conversation: Cell::new(0),
        stop: RefCell::new(None),
        default_role: RefCell::new(None),
        walk_chain,
        tasks: TaskPool::default(),
    });
    let mut unmet = pack_lines;
    unmet.extend(models::unmet_requirements(&run));
    unmet.extend(run.prompt.front.input.iter().filter(|p| !store.has_file(p)).map(|p| format!("- missing input file: {p}")));
    if !unmet.is_empty() {
        return Err(requirements_unmet(&unmet));
    }
    run.check_cancelled();
    if let Some(stop) = run.stop.borrow().clone() {
        return Err(stop);
    }
    let var = crate::obj!({});
    let memory = Meter::new(run.limits.memory_bytes);
    // `var` counts against the memory ceiling from its first `{}` (`docs/language.md`).
    if let Err(refused) = memory.charge(Held::Var, json_size(&var) as i64) {
        return Err(RunError::new(
            RunErrorKind::Limit,
            format!("memory ceiling of {} bytes exceeded: {}", refused.ceiling, refused.describe()),
        ));
    }
    let chain = Rc::new(Chain {
        identity: Identity::new("0".into(), Clock::forked(&Clock::default(), "0")),
        args: options.args,
        argv: RefCell::new(argv),
        var: Rc::new(RefCell::new(var)),
        depth: 0,
        item: RefCell::new(None),
        worker: RefCell::new(None),
        index: None,
        memory,
        tasks: RefCell::new(Vec::new()),
        caller: None,
    });
    // The main walk and every task run on one executor; tasks still running when the run ends
    // (it failed or was cancelled) are cancelled with it.
    let result = tasks::drive(&run.tasks, main_walk(&run, &chain)).await;
    for task in run.tasks.running() {
        chains::cancel(&run, &task);
    }
    // Every write the run made is in the backend before the run ends, success or failure.
    let flushed = store.flush().await.map_err(|detail| backend_failure(&*run.host, detail));
    let result = result.and_then(|r| flushed.map(|()| r))?;
    if let Some(missing) = run.prompt.front.output.iter().find(|p| !store.has_file(p)) {
        return Err(RunError::new(RunErrorKind::Vfs, format!("output file not written: {missing}")));
    }
    Ok(result)
}

/// The run's backend, each call raced against the host's cancellation.
struct Abortable {
    inner: Rc<dyn Backend>,
    host: Rc<dyn Host>,
}

impl Abortable {
    fn race<T: 'static, E: From<String> + 'static>(
        &self,
        work: LocalBoxFuture<'static, Result<T, E>>,
    ) -> LocalBoxFuture<'static, Result<T, E>> {
        let cancelled = self.host.cancelled();
        Box::pin(async move {
            match futures::future::select(work, cancelled).await {
                futures::future::Either::Left((answer, _)) => answer,
                futures::future::Either::Right(_) => Err("the run was cancelled while the store backend was answering".to_string().into()),
            }
        })
    }
}

impl Backend for Abortable {
    fn open(&self) -> LocalBoxFuture<'static, Result<Opened, String>> {
        self.race(self.inner.open())
    }
    fn read(&self, path: &str) -> LocalBoxFuture<'static, Result<Option<Vec<u8>>, crate::host::HostError>> {
        self.race(self.inner.read(path))
    }
    fn commit(&self, changes: Vec<Change>) -> LocalBoxFuture<'static, Result<(), String>> {
        self.race(self.inner.commit(changes))
    }
}

/// How a walk over one level of sections ended.
enum Walked {
    Returned(String),
    RanOut,
}

/// The main chain: the H1 pass, then the top-level walk (from the H1's jump target, if it
/// jumped), then the chain's end.
async fn main_walk(run: &Rc<RunShared>, chain: &Rc<Chain>) -> Result<Option<String>, RunError> {
    let walked = match block::run_entry(run, chain, None).await? {
        EntryEnd::Returned(result) => Walked::Returned(result),
        EntryEnd::FellThrough => walk_level(run, chain, &run.prompt.top, 0, false).await?,
        EntryEnd::Jumped(target) => walk_from(run, chain, target).await?,
    };
    end_chain(run, chain, Ok(walked)).await
}

/// A chain started by `call` or as a task: its walk from `start` (which runs even when it is off
/// the walk: it was addressed), then the chain's end. This is `RunShared::walk_chain`.
fn walk_chain(run: Rc<RunShared>, chain: Rc<Chain>, start: usize) -> LocalBoxFuture<'static, Result<Option<String>, RunError>> {
    Box::pin(async move {
        let walked = if chain.worker.borrow().is_some() {
            // A worker function's arm is one entry at the caller's section, running the function.
            match block::run_entry(&run, &chain, Some(start)).await {
                Ok(EntryEnd::Returned(r)) => Ok(Walked::Returned(r)),
                Ok(EntryEnd::FellThrough) => Ok(Walked::RanOut),
                Ok(EntryEnd::Jumped(target)) => walk_from(&run, &chain, target).await,
                Err(e) => Err(e),
            }
        } else {
            walk_from(&run, &chain, start).await
        };
        end_chain(&run, &chain, walked).await
    })
}

/// A chain's end joins every task it owns; a chain that failed cancels the ones still running.
async fn end_chain(run: &RunShared, chain: &Chain, walked: Result<Walked, RunError>) -> Result<Option<String>, RunError> {
    match walked {
        Ok(w) => {
            chains::join_owned(chain).await;
            Ok(match w {
                Walked::Returned(r) => Some(r),
                Walked::RanOut => None,
            })
        }
        Err(e) => {
            let owned: Vec<_> = chain.tasks.borrow().clone();
            for task in &owned {
                chains::cancel(run, task);
            }
            Err(e)
        }
    }
}

/// Walks the level `target` belongs to, starting at `target`.
async fn walk_from(run: &Rc<RunShared>, chain: &Rc<Chain>, target: usize) -> Result<Walked, RunError> {
    let level = run.prompt.level_of(target);
    let pos = level.iter().position(|&j| j == target).unwrap_or(0);
    walk_level(run, chain, &level, pos, true).await
}

/// The walk over one level of sections (docs/language.md, "Runs, walks and chains"): from `pos`
/// in file order, skipping off-walk sections unless addressed, until a block returns or the level
/// runs out. A jump to a sibling goes on at it; a jump to a child walks the child level and, when
/// that runs out, resumes this level after the jumper.
fn walk_level<'a>(
    run: &'a Rc<RunShared>,
    chain: &'a Rc<Chain>,
    level: &'a [usize],
    mut pos: usize,
    mut addressed: bool,
) -> LocalBoxFuture<'a, Result<Walked, RunError>> {
    Box::pin(async move {
        while let Some(&i) = level.get(pos) {
            if run.prompt.sections[i].off_walk && !addressed {
                pos += 1;
                continue;
            }
            addressed = false;
            match block::run_entry(run, chain, Some(i)).await? {
                EntryEnd::Returned(result) => return Ok(Walked::Returned(result)),
                EntryEnd::FellThrough => pos += 1,
                EntryEnd::Jumped(target) => match level.iter().position(|&j| j == target) {
                    Some(p) => {
                        pos = p;
                        addressed = true;
                    }
                    None => {
                        let children = &run.prompt.sections[i].children;
                        let at = children.iter().position(|&j| j == target).unwrap_or(0);
                        if let Walked::Returned(r) = walk_level(run, chain, children, at, true).await? {
                            return Ok(Walked::Returned(r));
                        }
                        pos += 1;
                    }
                },
            }
        }
        Ok(Walked::RanOut)
    })
}
