//! The memory ceiling's meter: what the engine holds on a prompt's behalf, next to the Lua heap.
//!
//! `limits.memory_bytes` bounds everything a run holds for its prompt, not only the Lua heap.
//! Data that lives on the Rust heap (`var`, the store view, message records; events go straight
//! to the host and are not held) is counted here by [`Held`] category; the rule is
//!
//! ```text
//! current VM's Lua heap + everything held  <=  memory_bytes
//! ```
//!
//! Whenever what is held changes, the current VM's Lua limit is set to `memory_bytes - held`, so
//! Lua's own allocations meet the same ceiling (a failing allocation is the usual memory
//! ceiling error). A growing charge that would pass the ceiling is refused: nothing changes, and
//! the caller ends the run with the `Limit` error [`Refused::describe`] words.
//!
//! ## Using it
//!
//! The run owns one [`Meter`] (`RunShared::memory`). Code holding data for a prompt reports it:
//!
//! - [`Meter::charge`]`(kind, delta)`: the held size of `kind` changes by `delta` bytes (negative
//!   for a release). Growth is checked; shrinking always succeeds.
//! - [`Meter::set`]`(kind, bytes)`: `kind` now holds exactly `bytes` (growth checked), for code that
//!   knows its total size more easily than its changes.
//!
//! Inside an Engine function (a Rust function Lua called), use `EntryCtx::hold`: it charges the
//! meter of the entry's chain and, when refused, stops the run with the `Limit` error and returns
//! the message for the failing call (`lua::env::fail`), like the other control signals.
//!
//! Sizes are estimates that must be cheap and deterministic; JSON data counts as its compact
//! serialization ([`json_size`]).

use serde_json::Value as Json;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// What the engine holds bytes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// The chain's `var` (its compact JSON text).
    Var,
    /// The run's working view of the store.
    Store,
    /// Conversation records (`messages`).
    Messages,
}

impl Held {
    pub const ALL: [Held; 3] = [Held::Var, Held::Store, Held::Messages];

    /// How messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Held::Var => "var",
            Held::Store => "the store",
            Held::Messages => "messages",
        }
    }

    fn slot(self) -> usize {
        self as usize
    }
}

/// A refused charge: what it would have held, and what else was there.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    pub ceiling: usize,
    pub kind: Held,
    /// What `kind` would have held after the charge.
    pub would_hold: usize,
    /// The current VM's Lua heap when the charge was refused (0 without a VM).
    pub lua_heap: usize,
    /// The other categories holding bytes, in [`Held::ALL`] order (`the store 12 bytes, ...`).
    pub others: String,
}

impl Refused {
    /// `var would hold 300000123 bytes next to 41234 bytes of Lua heap` (and `, the store 12
    /// bytes` for each other category holding some): the part after the section in the error.
    pub fn describe(&self) -> String {
        let mut s = format!("{} would hold {} bytes next to {} bytes of Lua heap", self.kind.name(), self.would_hold, self.lua_heap);
        if !self.others.is_empty() {
            s.push_str(", ");
            s.push_str(&self.others);
        }
        s
    }
}

/// The heap of the VM that runs now, as the meter needs it. The Lua layer implements it
/// (`lua/mod.rs`), so this module stays free of Lua types.
pub trait Heap {
    /// Bytes the VM's heap holds now; `None` once the VM is gone.
    fn used(&self) -> Option<usize>;
    /// A full collection, as Lua runs before it fails an allocation.
    fn collect(&self);
    /// The most the VM's heap may grow to.
    fn set_limit(&self, bytes: usize);
}

/// The run's meter (see the module documentation).
pub struct Meter {
    ceiling: usize,
    held: [Cell<usize>; 3],
    /// The VM that runs now (the last one attached).
    vm: RefCell<Option<Rc<dyn Heap>>>,
}

impl Meter {
    pub fn new(ceiling: usize) -> Self {
        Meter { ceiling, held: Default::default(), vm: RefCell::new(None) }
    }

    /// Everything held, all categories together.
    pub fn held(&self) -> usize {
        self.held.iter().map(Cell::get).sum()
    }

    fn describe_except(&self, except: Option<Held>) -> String {
        let mut s = String::new();
        for k in Held::ALL.into_iter().filter(|&k| Some(k) != except && self.held_by(k) > 0) {
            if !s.is_empty() {
                s.push_str(", ");
            }
            s.push_str(&format!("{} {} bytes", k.name(), self.held_by(k)));
        }
        s
    }

    pub fn held_by(&self, kind: Held) -> usize {
        self.held[kind.slot()].get()
    }

    /// Makes `vm` the current VM and sets its limit to what the held bytes leave.
    pub fn attach(&self, vm: Rc<dyn Heap>) {
        self.apply_limit(&*vm);
        *self.vm.borrow_mut() = Some(vm);
    }

    fn current_vm(&self) -> Option<Rc<dyn Heap>> {
        self.vm.borrow().clone()
    }

    fn apply_limit(&self, vm: &dyn Heap) {
        // mlua reads a limit of 0 as "no limit": a ceiling used up entirely still leaves 1.
        vm.set_limit(self.ceiling.saturating_sub(self.held()).max(1))
    }

    /// A full collection of the current VM's garbage (none without a VM).
    pub fn collect(&self) {
        if let Some(vm) = self.current_vm() {
            vm.collect();
        }
    }

    /// Changes what `kind` holds by `delta` bytes. A growth that would take the current VM's Lua
    /// heap plus everything held past the ceiling is refused (after a full garbage collection,
    /// as Lua does before failing an allocation) and changes nothing.
    pub fn charge(&self, kind: Held, delta: i64) -> Result<(), Refused> {
        let now = self.held_by(kind);
        let next = if delta < 0 { now.saturating_sub(delta.unsigned_abs() as usize) } else { now.saturating_add(delta as usize) };
        self.set(kind, next)
    }

    /// `kind` now holds exactly `bytes`. Growth is checked as in [`Meter::charge`].
    pub fn set(&self, kind: Held, bytes: usize) -> Result<(), Refused> {
        let now = self.held_by(kind);
        let vm = self.current_vm();
        if bytes > now {
            let others = self.held() - now;
            let total = others.saturating_add(bytes);
            let heap = || vm.as_ref().and_then(|vm| vm.used()).unwrap_or(0);
            let mut lua_heap = heap();
            // Garbage may be what is in the way: collect once, as Lua does before it fails.
            if let Some(vm) = vm.as_ref().filter(|_| lua_heap.saturating_add(total) > self.ceiling && lua_heap > 0) {
                vm.collect();
                lua_heap = heap();
            }
            if lua_heap.saturating_add(total) > self.ceiling {
                let others = self.describe_except(Some(kind));
                return Err(Refused { ceiling: self.ceiling, kind, would_hold: bytes, lua_heap, others });
            }
        }
        self.held[kind.slot()].set(bytes);
        if let Some(vm) = &vm {
            self.apply_limit(&**vm);
        }
        Ok(())
    }
}

/// What a conversation record holds: its text, its ids, and its tool calls' arguments as JSON.
pub fn record_size(r: &crate::tools::Record) -> usize {
    let calls: usize = r.tool_calls.iter().map(|c| c.id.len() + c.name.len() + json_size(&c.arguments)).sum();
    let extra = r.tool_call_id.as_ref().map_or(0, String::len) + r.reasoning.as_ref().map_or(0, String::len);
    r.role.len() + r.content.len() + extra + calls
}

/// The length of `v`'s compact JSON text (what `serde_json::to_string` writes), computed without
/// writing it: the size `var` and other JSON data count as.
pub fn json_size(v: &Json) -> usize {
    match v {
        Json::Null => 4,
        Json::Bool(true) => 4,
        Json::Bool(false) => 5,
        Json::Number(n) => {
            let mut count = Count(0);
            let _ = std::fmt::Write::write_fmt(&mut count, format_args!("{n}"));
            count.0
        }
        Json::String(s) => string_size(s),
        // Brackets, and a comma between items.
        Json::Array(items) => 2 + items.len().saturating_sub(1) + items.iter().map(json_size).sum::<usize>(),
        Json::Object(map) => 2 + map.len().saturating_sub(1) + map.iter().map(|(k, v)| member_size(k, v)).sum::<usize>(),
    }
}

/// `"key":value` inside an object, without the comma.
pub fn member_size(key: &str, value: &Json) -> usize {
    string_size(key) + 1 + json_size(value)
}

/// A string's JSON text: quotes, and serde_json's escapes (`\"`, `\\`, the short control escapes,
/// `\u00XX` for the other control characters).
pub fn string_size(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

struct Count(usize);

impl std::fmt::Write for Count {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn json() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i64>().prop_map(Json::from),
            any::<u64>().prop_map(Json::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Json::from),
            any::<String>().prop_map(Json::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
                prop::collection::btree_map(any::<String>(), inner, 0..6).prop_map(|m| Json::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn json_size_is_the_serialized_length(v in json()) {
            prop_assert_eq!(json_size(&v), serde_json::to_string(&v).unwrap().len());
        }
    }

    #[test]
    fn charges_and_releases_without_a_vm() {
        let m = Meter::new(100);
        assert_eq!(m.charge(Held::Var, 60), Ok(()));
        assert_eq!(m.charge(Held::Store, 30), Ok(()));
        let refused = m.charge(Held::Var, 11).unwrap_err();
        assert_eq!(refused.describe(), "var would hold 71 bytes next to 0 bytes of Lua heap, the store 30 bytes");
        assert_eq!(m.held(), 90);
        m.charge(Held::Store, -30).unwrap();
        assert_eq!(m.charge(Held::Var, 40), Ok(()));
        assert_eq!(m.set(Held::Var, 5), Ok(()));
        assert_eq!(m.charge(Held::Var, -10), Ok(()));
        assert_eq!(m.held(), 0);
    }

    /// A heap that records its limit and answers a set size.
    struct FakeHeap {
        used: Cell<usize>,
        limit: Cell<usize>,
    }

    impl Heap for FakeHeap {
        fn used(&self) -> Option<usize> {
            Some(self.used.get())
        }
        fn collect(&self) {}
        fn set_limit(&self, bytes: usize) {
            self.limit.set(bytes);
        }
    }

    #[test]
    fn the_vm_limit_follows_what_is_held() {
        let heap = Rc::new(FakeHeap { used: Cell::new(0), limit: Cell::new(0) });
        let m = Meter::new(4 << 20);
        m.attach(heap.clone());
        assert_eq!(heap.limit.get(), 4 << 20);
        m.charge(Held::Var, 3 << 20).unwrap();
        assert_eq!(heap.limit.get(), 1 << 20);
        m.charge(Held::Var, -(3 << 20)).unwrap();
        assert_eq!(heap.limit.get(), 4 << 20);
        // The heap counts when charging.
        heap.used.set(3 << 20);
        assert!(m.charge(Held::Var, 2 << 20).is_err());
        heap.used.set(0);
        assert_eq!(m.charge(Held::Var, 2 << 20), Ok(()));
        // A ceiling used up entirely still leaves a limit of 1 (0 would mean none).
        assert!(m.set(Held::Store, 2 << 20).is_ok());
        assert_eq!(heap.limit.get(), 1);
    }
}
