//! The state a run keeps, at its three lifetimes: the whole run ([`RunShared`]), one chain
//! ([`Chain`]: the main walk, a `call`, a task or a fanout arm, with its argument string, frozen
//! argv, walk-local var, depth and tasks), and one section entry ([`EntryCtx`]: the fresh VM's view
//! of where it runs). A chain's store identity ([`Identity`]) is shared by the calls it makes, and
//! new for every task.

use serde_json::Value as Json;
use std::cell::{Cell, Ref, RefCell, RefMut};
use std::rc::Rc;

use futures::future::LocalBoxFuture;

use super::conversation::Conversation;
use super::identity::Identity;
use super::memory::{self, Held, Meter, Refused};
use super::tasks::{Task, TaskPool};
use crate::error::{RunError, RunErrorKind};
use crate::host::Host;
use crate::host::{HostError, Incoming};
use crate::prompt::Prompt;
use crate::store::view::Store;
use crate::tools::catalog::{Catalog, PackSpec, Unavailable};
use crate::tools::{Record, Scope};

use super::events::Event;

#[derive(Debug, Clone)]
pub struct Limits {
    /// Lua instructions per block.
    pub instructions: u64,
    /// Bytes of Lua memory per VM.
    pub memory_bytes: usize,
    pub max_tool_iterations: u64,
    pub fanout_concurrency: u64,
    /// Section entries over the whole run (the H1 pass, every walk step, call and task arm):
    /// the cap that ends a `jump` or `call` loop, whose every entry has a fresh instruction budget.
    pub section_entries: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            instructions: 10_000_000,
            memory_bytes: 64 * 1024 * 1024,
            max_tool_iterations: 32,
            fanout_concurrency: 64,
            section_entries: 100_000,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Ui {
    pub kind: String,
    pub interactive: bool,
}

impl Default for Ui {
    fn default() -> Self {
        Ui { kind: "test".into(), interactive: false }
    }
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

pub struct RunShared {
    pub prompt: Prompt,
    pub host: Rc<dyn Host>,
    pub limits: Limits,
    pub ui: Ui,
    pub seed: u64,
    /// 32 lowercase hex digits derived from the seed: the untrusted envelope's nonce.
    pub nonce: String,
    /// `sys.execution`.
    pub execution: String,
    /// `sys.when`, fixed at run start.
    pub started: String,
    /// The last `sys.id` handed out (H1 is 0).
    pub last_id: Cell<u64>,
    /// The last conversation id handed out (one per section entry, the H1 pass included).
    pub last_conversation: Cell<u64>,
    /// Set once the run must stop (budget, memory, cancellation): a control signal no `pcall`
    /// catches. The block runner reports it instead of whatever error unwound the block.
    pub stop: RefCell<Option<RunError>>,
    /// Host time of the host's last turn, across entries: a run of entries that each end inside
    /// their slice (a `jump` loop) must still give the host its turns, or a timer or `abort()`
    /// never runs and the loop goes on for ever.
    pub last_turn_ms: Cell<f64>,
    /// `models.default(role)` from the H1 body.
    pub default_role: RefCell<Option<String>>,
    /// The run's working view of the host's store.
    pub store: Rc<Store>,
    /// The run's Packs and tool catalog, fixed for the whole run.
    pub catalog: Catalog,
    /// The host's Packs as it registered them (for reasons and preludes).
    pub host_packs: Vec<PackSpec>,
    /// Runs a chain's walk from a section to its end (the engine's walk; `effects` cannot name
    /// it, so the engine hands it over when it creates the run).
    pub walk_chain: WalkFn,
    /// The run's tasks and the queue the run's executor takes new ones from.
    pub tasks: TaskPool,
}

/// A chain's walk from its first section: the chain's result (`None` when the walk ran out).
pub type WalkFn = fn(Rc<RunShared>, Rc<Chain>, usize) -> LocalBoxFuture<'static, Result<Option<String>, RunError>>;

/// The deepest a chain may nest (`call`, `tasks.spawn` and `tasks.fanout` counted together).
pub const MAX_DEPTH: u32 = 8;

impl RunShared {
    pub fn next_id(&self) -> u64 {
        let id = self.last_id.get() + 1;
        self.last_id.set(id);
        id
    }

    /// Why a host Pack with this id cannot serve the run, if the host said so.
    pub fn unavailable_reason(&self, id: &str) -> Option<String> {
        let p = self.host_packs.iter().find(|p| p.name == id || crate::ids::pack_id(&p.name) == id)?;
        match p.unavailable.as_ref()? {
            Unavailable::Reason(r) => Some(r.clone()),
            Unavailable::Needs { service, reason } => {
                Some(reason.clone().unwrap_or_else(|| format!("{id} needs {service}, and this host provides none")))
            }
        }
    }

    pub fn stop_with(&self, err: RunError) {
        let mut stop = self.stop.borrow_mut();
        if stop.is_none() {
            *stop = Some(err);
        }
    }

    pub fn stopped(&self) -> bool {
        self.stop.borrow().is_some()
    }

    pub fn check_cancelled(&self) {
        if !self.stopped() && self.host.is_cancelled() {
            self.stop_with(RunError::new(RunErrorKind::Cancelled, "the run was cancelled"));
        }
    }

    /// Emits `event` with the fields `fields` builds: built only when the host observes events,
    /// so a run nobody watches spends nothing on them (six per fanout arm).
    pub fn emit(&self, event: Event, section: Option<&str>, fields: impl FnOnce() -> Json) {
        if self.host.observed() {
            self.emit_built(event, section, fields());
        }
    }

    /// What `emit` does with the fields once built, apart from the generic part so that it is
    /// compiled once rather than into each of its callers' copies.
    fn emit_built(&self, event: Event, section: Option<&str>, mut fields: Json) {
        if let Json::Object(map) = &mut fields {
            map.insert("event".into(), Json::from(event.as_str()));
            map.insert("type".into(), Json::from(event.as_str()));
            map.insert("section".into(), Json::from(section));
        }
        self.host.emit(fields);
    }
}

/// One chain: the main walk (H1 pass included), a `call`, a task or a fanout arm.
pub struct Chain {
    pub identity: Rc<Identity>,
    /// The argument string `{{ args }}` shows.
    pub args: String,
    /// The parsed arguments sections see, frozen when the H1 pass ends (`None` is nil).
    pub argv: RefCell<Option<Json>>,
    /// The walk-local clipboard, shared by every entry on the walk.
    pub var: Rc<RefCell<Json>>,
    /// 0 for the main chain; one more for every call, task and arm below it.
    pub depth: u32,
    /// The seeded item, until the chain's first section takes it.
    pub item: RefCell<Option<Json>>,
    /// A fanout arm whose worker is a Lua function: the function (compiled), until the arm's one
    /// entry runs it in place of the section's blocks.
    pub worker: RefCell<Option<Rc<[u8]>>>,
    /// `sys.index`: the arm's 1-based position in its fanout.
    pub index: Option<usize>,
    /// What the chain holds for the prompt (its var, its entries' messages and VM heaps, the
    /// store view), counted against `limits.memory_bytes`.
    pub memory: Meter,
    /// Tasks this chain started: its end joins them.
    pub tasks: RefCell<Vec<Rc<Task>>>,
    /// The entry (its `sys.id`) whose `call`, spawn or fanout started this chain; `None` for the
    /// main chain. Events name it (`caller`), so an observer can nest the chain's entries under it.
    pub caller: Option<u64>,
}

impl Chain {
    pub fn id(&self) -> &str {
        &self.identity.id
    }
}

/// One section entry (or the H1 pass): what its fresh VM needs to know. The entry's own state
/// is in small parts (its prose, its conversation, its tool scope) and flags behind methods; the
/// VM's work budget is the Lua layer's (`lua::budget`).
pub struct EntryCtx {
    pub run: Rc<RunShared>,
    pub chain: Rc<Chain>,
    /// `None` for the H1 pass.
    pub section: Option<usize>,
    pub id: u64,
    /// The item seeded into this entry (the first section of a fanout arm or a task).
    pub item: Option<Json>,
    /// The prose of the block that runs, and of its callers while a `require`d library runs.
    pub prose: Prose,
    /// The entry's conversation (`messages`), its model role and the `models.loop` round.
    pub conversation: Conversation,
    /// The entry's tool scope, local tools, rendered list and call counts.
    scope: RefCell<Scope>,
    /// Set by `jump`: the section the walk goes on at once this entry's block unwinds.
    jump_to: Cell<Option<usize>>,
    /// True while the shared library replays (store calls convert arguments like Lua does).
    loading_shared: Cell<bool>,
    /// True while Pack preludes install: tool and model calls are refused.
    loading_prelude: Cell<bool>,
}

impl EntryCtx {
    /// Entry `id` of `chain` at `section` (`None`: the H1 pass) with `item` seeded, its
    /// conversation numbered `conversation` for the host.
    pub fn new(run: Rc<RunShared>, chain: Rc<Chain>, section: Option<usize>, id: u64, item: Option<Json>, conversation: u64) -> EntryCtx {
        EntryCtx {
            run,
            chain,
            section,
            id,
            item,
            prose: Prose::default(),
            conversation: Conversation::new(conversation),
            scope: RefCell::new(Scope::default()),
            jump_to: Cell::new(None),
            loading_shared: Cell::new(false),
            loading_prelude: Cell::new(false),
        }
    }

    pub fn heading(&self) -> String {
        self.run.prompt.entry_heading(self.section)
    }

    /// Emits `event` for this entry: its section, and the chain and entry it belongs to, so an
    /// observer can tell two arms of one section apart and nest what happens in an entry.
    pub fn emit(&self, event: Event, fields: impl FnOnce() -> Json) {
        if self.run.host.observed() {
            self.emit_built(event, fields());
        }
    }

    /// `emit` once the fields are built (compiled once, as `RunShared::emit_built`).
    fn emit_built(&self, event: Event, mut fields: Json) {
        if let Json::Object(map) = &mut fields {
            map.insert("chain".into(), Json::from(self.chain.id()));
            map.insert("entry".into(), Json::from(self.id));
        }
        self.run.emit_built(event, Some(self.section_name()), fields);
    }

    /// `sys.section_name` and the `section` of events: the heading text without markers.
    pub fn section_name(&self) -> &str {
        match self.section {
            Some(i) => &self.run.prompt.sections[i].name,
            None => &self.run.prompt.title,
        }
    }

    pub fn is_h1(&self) -> bool {
        self.section.is_none()
    }

    pub fn scope(&self) -> Ref<'_, Scope> {
        self.scope.borrow()
    }

    pub fn scope_mut(&self) -> RefMut<'_, Scope> {
        self.scope.borrow_mut()
    }

    /// `jump(target)`: the walk goes on at `section` once the block has unwound.
    pub fn jump(&self, section: usize) {
        self.jump_to.set(Some(section));
    }

    /// Whether a `jump` is unwinding the block (a control signal, like a stop).
    pub fn is_jumping(&self) -> bool {
        self.jump_to.get().is_some()
    }

    /// The section a `jump` named, once: the block runner ends the entry with it.
    pub fn take_jump(&self) -> Option<usize> {
        self.jump_to.take()
    }

    pub fn loading_shared(&self) -> bool {
        self.loading_shared.get()
    }

    pub fn set_loading_shared(&self, loading: bool) {
        self.loading_shared.set(loading);
    }

    pub fn loading_prelude(&self) -> bool {
        self.loading_prelude.get()
    }

    pub fn set_loading_prelude(&self, loading: bool) {
        self.loading_prelude.set(loading);
    }

    /// Charges `delta` bytes of `kind` to the chain's meter (`effects::memory`). When refused,
    /// the run stops with the `Limit` error and its message comes back for the failing call.
    pub fn hold(&self, kind: Held, delta: i64) -> Result<(), String> {
        match self.chain.memory.charge(kind, delta) {
            Ok(()) => Ok(()),
            Err(refused) => {
                let err = self.refused_error(&refused);
                let message = err.message.clone();
                self.run.stop_with(err);
                Err(message)
            }
        }
    }

    /// [`EntryCtx::hold`] for code that knows the total: `kind` now holds `bytes`.
    pub fn hold_total(&self, kind: Held, bytes: usize) -> Result<(), String> {
        let now = self.chain.memory.held_by(kind);
        self.hold(kind, bytes as i64 - now as i64)
    }

    /// Appends a record to the entry's conversation, charging it against the memory ceiling first.
    /// When refused, the run stops with the `Limit` error (its message comes back) and nothing is
    /// appended.
    pub fn push_record(&self, record: Record) -> Result<(), String> {
        self.hold(Held::Messages, memory::record_size(&record) as i64)?;
        self.conversation.push(record);
        Ok(())
    }

    /// An answer the host refused before it crossed (`HostError::TooLarge`): the run stops with
    /// the memory ceiling's `Limit` error, and its message comes back for the failing call.
    pub fn refuse_incoming(&self, what: Incoming, bytes: u64) -> String {
        let heading = self.heading();
        let message = format!(
            "memory ceiling of {} bytes exceeded in section {}: {} of {} bytes does not fit",
            self.run.limits.memory_bytes,
            heading,
            what.name(),
            bytes
        );
        self.run.stop_with(RunError::new(RunErrorKind::Limit, message.clone()).in_section(&heading));
        message
    }

    /// A host callback's failure as the message the failing call answers: a refused answer
    /// stops the run first ([`EntryCtx::refuse_incoming`]).
    pub fn host_failure(&self, what: Incoming, error: HostError) -> String {
        match error {
            HostError::Failed(message) => message,
            HostError::TooLarge(bytes) => self.refuse_incoming(what, bytes),
        }
    }

    /// The error a refused charge ends the run with.
    fn refused_error(&self, refused: &Refused) -> RunError {
        let heading = self.heading();
        RunError::new(
            RunErrorKind::Limit,
            format!("memory ceiling of {} bytes exceeded in section {}: {}", refused.ceiling, heading, refused.describe()),
        )
        .in_section(&heading)
    }
}

/// An entry's prose: the block's pending prose and, once read, its rendering; while a `require`d
/// library's blocks run, theirs, with the callers' kept (innermost last).
#[derive(Default)]
pub struct Prose {
    current: RefCell<ProseSlot>,
    callers: RefCell<Vec<ProseSlot>>,
}

#[derive(Default)]
struct ProseSlot {
    raw: String,
    rendered: Option<String>,
}

impl Prose {
    /// A block starts: `raw` is its pending prose, not rendered yet.
    pub fn start(&self, raw: String) {
        *self.current.borrow_mut() = ProseSlot { raw, rendered: None };
    }

    pub fn raw(&self) -> String {
        self.current.borrow().raw.clone()
    }

    /// The rendering, once the block has read `prose`.
    pub fn rendered(&self) -> Option<Ref<'_, str>> {
        Ref::filter_map(self.current.borrow(), |slot| slot.rendered.as_deref()).ok()
    }

    pub fn set_rendered(&self, text: String) {
        self.current.borrow_mut().rendered = Some(text);
    }

    /// A library block's prose replaces the caller's while it runs ([`Prose::pop`] restores it).
    pub fn push(&self, raw: String) {
        let caller = std::mem::replace(&mut *self.current.borrow_mut(), ProseSlot { raw, rendered: None });
        self.callers.borrow_mut().push(caller);
    }

    pub fn pop(&self) {
        if let Some(caller) = self.callers.borrow_mut().pop() {
            *self.current.borrow_mut() = caller;
        }
    }
}
