//! Tasks: chains that run beside their owner (`tasks.spawn`, each `tasks.fanout` arm, the model's
//! `task` built-in), and the executor that runs them.
//!
//! Every task is a future on the run's one executor ([`drive`]), next to the main walk: while
//! one chain waits on its model or a tool, the others run, each in Lua states of its own. A task
//! ends once, with its chain's result, an error, or cancellation; whoever waits on it
//! ([`Task::finished`], [`first_finished`]) is woken then. Joining (merging the task's place in
//! the run's order into the joiner's, `store::claims`) is the caller's step, in `chains`.

use futures::future::{AbortHandle, LocalBoxFuture};
use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::Value as Json;
use std::cell::{Cell, Ref, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Poll, Waker};

use super::identity::Identity;
use crate::error::{RunError, RunErrorKind};

/// `handle:status()` and the model's `task_status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Running,
    Done,
    Failed,
    Cancelled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }
}

/// How a task ended: its chain's result or error (cancellation is an error of kind `Cancelled`).
#[derive(Debug, Clone)]
pub struct TaskEnd {
    pub outcome: Result<Option<String>, RunError>,
    pub cancelled: bool,
}

/// Who started a task, which decides how its result is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Starter {
    /// `tasks.spawn` (delivered by `tasks.join`/`tasks.join_any`).
    Spawn,
    /// A `tasks.fanout` arm (delivered by the fanout).
    Arm,
    /// The model's `task` built-in (delivered as a task notice).
    Model,
}

pub struct Task {
    pub id: String,
    /// The section the task started at (its heading is the task's target).
    pub section: usize,
    /// The seeded item, reported back in the task's result.
    pub item: Option<Json>,
    pub starter: Starter,
    /// The task's chain's store identity (its clock is what a join merges).
    pub identity: Rc<Identity>,
    end: RefCell<Option<TaskEnd>>,
    wakers: RefCell<Vec<Waker>>,
    abort: AbortHandle,
    /// Delivered to its owner (joined); a task is joined at most once.
    pub joined: Cell<bool>,
}

impl Task {
    pub fn new(id: String, section: usize, item: Option<Json>, starter: Starter, identity: Rc<Identity>, abort: AbortHandle) -> Task {
        Task {
            id,
            section,
            item,
            starter,
            identity,
            end: RefCell::new(None),
            wakers: RefCell::new(Vec::new()),
            abort,
            joined: Cell::new(false),
        }
    }

    pub fn status(&self) -> Status {
        match &*self.end.borrow() {
            None => Status::Running,
            Some(TaskEnd { cancelled: true, .. }) => Status::Cancelled,
            Some(TaskEnd { outcome: Ok(_), .. }) => Status::Done,
            Some(TaskEnd { outcome: Err(_), .. }) => Status::Failed,
        }
    }

    pub fn end(&self) -> Option<Ref<'_, TaskEnd>> {
        Ref::filter_map(self.end.borrow(), Option::as_ref).ok()
    }

    pub fn is_finished(&self) -> bool {
        self.end.borrow().is_some()
    }

    /// Records how the task ended (the first end wins) and wakes whoever waits on it.
    pub fn finish(&self, end: TaskEnd) -> bool {
        if self.is_finished() {
            return false;
        }
        *self.end.borrow_mut() = Some(end);
        for w in self.wakers.borrow_mut().drain(..) {
            w.wake();
        }
        true
    }

    /// Stops a running task where it waits (its future is dropped at the executor's next look).
    /// Returns false when it had already ended.
    pub fn cancel(&self) -> bool {
        self.abort.abort();
        let cancelled = RunError::new(RunErrorKind::Cancelled, format!("task {} was cancelled", self.id));
        self.finish(TaskEnd { outcome: Err(cancelled), cancelled: true })
    }

    fn watch(&self, waker: &Waker) {
        let mut wakers = self.wakers.borrow_mut();
        if !wakers.iter().any(|w| w.will_wake(waker)) {
            wakers.push(waker.clone());
        }
    }

    /// Resolves once the task has ended.
    pub async fn finished(&self) {
        futures::future::poll_fn(|cx| {
            if self.is_finished() {
                Poll::Ready(())
            } else {
                self.watch(cx.waker());
                Poll::Pending
            }
        })
        .await
    }
}

/// Resolves with the position of the first of `tasks` that has ended (the lowest position when
/// several have, so the answer never depends on the order they were polled in).
pub async fn first_finished(tasks: &[Rc<Task>]) -> usize {
    futures::future::poll_fn(|cx| match tasks.iter().position(|t| t.is_finished()) {
        Some(i) => Poll::Ready(i),
        None => {
            for t in tasks {
                t.watch(cx.waker());
            }
            Poll::Pending
        }
    })
    .await
}

/// The run's tasks: every task by id, and the futures started since the executor last looked.
#[derive(Default)]
pub struct TaskPool {
    incoming: RefCell<Vec<LocalBoxFuture<'static, ()>>>,
    by_id: RefCell<BTreeMap<String, Rc<Task>>>,
}

impl TaskPool {
    /// Registers a task and queues the future that runs it.
    pub fn start(&self, task: Rc<Task>, future: LocalBoxFuture<'static, ()>) {
        self.by_id.borrow_mut().insert(task.id.clone(), task);
        self.incoming.borrow_mut().push(future);
    }

    pub fn get(&self, id: &str) -> Option<Rc<Task>> {
        self.by_id.borrow().get(id).cloned()
    }

    /// The tasks still running.
    pub fn running(&self) -> Vec<Rc<Task>> {
        self.by_id.borrow().values().filter(|t| !t.is_finished()).cloned().collect()
    }
}

/// Runs `main` and every task the run starts on one executor until `main` is done. Tasks
/// started while something is polled wait in the pool's queue; they join the running set before
/// the executor next waits, so a spawn never needs a waker of its own. Tasks still running when
/// `main` is done are dropped (their chains are cancelled by then).
pub async fn drive<F: Future>(pool: &TaskPool, main: F) -> F::Output {
    let mut main = pin!(main);
    let mut running: FuturesUnordered<LocalBoxFuture<'static, ()>> = FuturesUnordered::new();
    futures::future::poll_fn(|cx| loop {
        if let Poll::Ready(v) = main.as_mut().poll(cx) {
            return Poll::Ready(v);
        }
        running.extend(pool.incoming.borrow_mut().drain(..));
        while let Poll::Ready(Some(())) = running.poll_next_unpin(cx) {}
        if pool.incoming.borrow().is_empty() {
            return Poll::Pending;
        }
    })
    .await
}
