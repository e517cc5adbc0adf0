//! A chain's store identity: the id its claims and tasks are named by, its place in the run's
//! order (a vector clock: `store::claims`), and the count of tasks it started. A `call` shares
//! its caller's; a task gets its own, forked from its owner's.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::store::claims::Clock;

/// A store identity: the chain id claims and task ids are named by, its place in the run's
/// order, and the count of tasks it started. A `call` shares its caller's.
pub struct Identity {
    /// `0` for the main chain (H1 included), `0.k` for its k-th task, `0.k.j` below.
    pub id: String,
    /// Shared, copied on write: a store call keeps the clock it started with while it waits,
    /// without holding a borrow across the wait.
    clock: RefCell<Rc<Clock>>,
    next_task: Cell<u32>,
}

impl Identity {
    pub fn new(id: String, clock: Clock) -> Rc<Identity> {
        Rc::new(Identity { id, clock: RefCell::new(Rc::new(clock)), next_task: Cell::new(0) })
    }

    /// The id of this identity's next task (`0.k`).
    pub fn next_task_id(&self) -> String {
        let k = self.next_task.get();
        self.next_task.set(k + 1);
        format!("{}.{k}", self.id)
    }

    /// The identity's clock as it stands now.
    pub fn clock(&self) -> Rc<Clock> {
        self.clock.borrow().clone()
    }

    /// A fork: the clock a new task `id` starts from; this identity's own epoch moves on, so what
    /// it does from now on is not ordered before the task.
    pub fn fork(&self, id: &str) -> Clock {
        let mut clock = self.clock.borrow_mut();
        let forked = Clock::forked(&clock, id);
        Rc::make_mut(&mut clock).tick(&self.id);
        forked
    }

    /// A join: everything `other` was ordered after, this identity is now ordered after too.
    pub fn join(&self, other: &Identity) {
        let theirs = other.clock();
        Rc::make_mut(&mut self.clock.borrow_mut()).join(&theirs);
    }
}
