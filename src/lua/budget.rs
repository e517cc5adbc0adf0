//! The work budget of a section entry's VM: the instruction budget, the event-loop turns and
//! the cancellation check, without a per-instruction hook.
//!
//! The build-produced Lua copy carries a small patch (`vendor/lua-src/patches/budget.patch`,
//! described in its README): the VM and the libraries spend *units* from a counter in the global
//! state, and when it runs out Lua calls [`on_budget`]. One unit is about one VM instruction:
//! a call of a Lua function spends the function's code length, a loop back-edge the length of
//! the loop body it closes (so the count is an upper bound of the instructions run), a C call 1,
//! a thrown error 200, and the C loops a prompt can drive (pattern matching, `string.rep`, case
//! mapping, `table.move`/`concat`/`sort`/`insert`/`remove`/`unpack`, concatenation, `utf8.len`)
//! what their work is worth (a step, an element, 16 or 64 bytes).
//!
//! [`on_budget`] runs every [`QUANTUM`] units at most: it adds the units to the block's count,
//! stops the run when the count passes `limits.instructions` or the run is stopping (Lua then
//! raises where the work is, in the VM or inside a library function), and when a turn for the
//! host's event loop is due (every [`SLICE`] units or [`TURN_MS`] of host time) it asks Lua to
//! call the hook below before its next VM instruction, where the block's coroutine can yield.
//! A C library function cannot yield: a turn waits until it returns, its work stays bounded by
//! the budget.

use mlua::ffi::{lua_Hook, lua_Integer, lua_State};
use mlua::{HookTriggers, Lua, VmState};
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::rc::Rc;

use crate::effects::context::EntryCtx;
use crate::error::{RunError, RunErrorKind};

/// Units between two calls of [`on_budget`] (at most): small enough that a turn, a stop or the
/// abort signal is seen within well under a millisecond of Lua work.
const QUANTUM: u64 = 100_000;
/// Units between turns given to the host's event loop, whatever the clock says (the native
/// test host's clock stands still).
const SLICE: u64 = 4_000_000;
/// Host time between turns given to the host's event loop.
pub(crate) const TURN_MS: f64 = 10.0;
/// Units allowed after a stop before Lua raises again (an error handler may run that long).
const STOP_GRACE: lua_Integer = 1_000;

const BUDGET_GO: c_int = 0;
const BUDGET_STOP: c_int = 1;
const BUDGET_HOOK: c_int = 2;

type BudgetFn = unsafe extern "C-unwind" fn(*mut lua_State, *mut c_void, lua_Integer, *mut lua_Integer) -> c_int;

extern "C-unwind" {
    // Added by budget.patch (lstate.c).
    fn lua_setbudget(l: *mut lua_State, f: Option<BudgetFn>, ud: *mut c_void, hook: Option<lua_Hook>, allowance: lua_Integer);
}

/// The budget of a section entry's VM: the count of the block that runs and its time slice. Its
/// readers are the callbacks the patched VM calls ([`on_budget`], the hook) and the block
/// runner's drive loop, which gives the host its turn when the hook yielded for one.
pub struct Budget {
    ctx: Rc<EntryCtx>,
    /// Budget units the current block has spent (about one per VM instruction).
    instructions: Cell<u64>,
    /// Units since the block last gave the host's event loop a turn.
    since_yield: Cell<u64>,
    /// The host clock (`Host::now_ms`) when the block last gave the event loop a turn.
    last_turn_ms: Cell<f64>,
    /// A turn is due: the next VM instruction where Lua can yield asks for it.
    yield_pending: Cell<bool>,
    /// Set by the hook when it asked Lua to yield for a time slice.
    slice_yield: Cell<bool>,
}

impl Budget {
    fn new(ctx: Rc<EntryCtx>) -> Budget {
        let last_turn_ms = Cell::new(ctx.run.last_turn_ms.get());
        Budget {
            ctx,
            instructions: Cell::new(0),
            since_yield: Cell::new(0),
            last_turn_ms,
            yield_pending: Cell::new(false),
            slice_yield: Cell::new(false),
        }
    }

    /// Whether the hook asked Lua to yield for a time slice since the last look (the drive loop
    /// then gives the host its turn).
    pub fn take_slice_yield(&self) -> bool {
        self.slice_yield.replace(false)
    }

    /// The host has had its turn: the block's time slice starts again, and the run's last turn
    /// (`RunShared::last_turn_ms`) is now.
    pub fn turn_given(&self) {
        self.last_turn_ms.set(self.ctx.run.host.now_ms());
        self.ctx.run.last_turn_ms.set(self.last_turn_ms.get());
    }

    /// The hook Lua calls before the next VM instruction once [`on_budget`] asked for it.
    fn on_hook(&self) -> mlua::Result<VmState> {
        if self.ctx.run.stopped() {
            return Err(mlua::Error::runtime("the run is stopping"));
        }
        if self.yield_pending.replace(false) {
            self.since_yield.set(0);
            self.slice_yield.set(true);
            return Ok(VmState::Yield);
        }
        Ok(VmState::Continue)
    }
}

/// Keeps the budget (and so its entry) alive for as long as the Lua state (mlua drops app data
/// after `lua_close`, which may still run finalizers that spend units), with the hook procedure
/// to hand back to Lua.
struct BudgetOwner {
    budget: Rc<Budget>,
    hook: lua_Hook,
}

/// Installs the budget on a fresh VM; the VM keeps it (`Vm::budget`) for the drive loop.
pub fn install(lua: &Lua, ctx: &Rc<EntryCtx>) -> mlua::Result<Rc<Budget>> {
    // The hook the patch calls for a turn is mlua's global hook procedure (so a `VmState::Yield`
    // becomes a yield mlua's async driver understands). mlua installs it on the current thread
    // when a global hook is set: read it back there, then set the hook again with no trigger,
    // which leaves it off on every thread.
    let budget = Rc::new(Budget::new(ctx.clone()));
    let hook_budget = budget.clone();
    let callback = Rc::new(move |_: &Lua, _: &mlua::debug::Debug| hook_budget.on_hook());
    let c = callback.clone();
    lua.set_global_hook(HookTriggers::new().every_nth_instruction(1), move |l, d| c(l, d))?;
    let hook = std::cell::Cell::new(None);
    // SAFETY: `lua_gethook` only reads the running thread's hook field.
    unsafe { lua.exec_raw::<()>((), |state| hook.set(mlua::ffi::lua_gethook(state)))? };
    lua.set_global_hook(HookTriggers::new(), move |l, d| callback(l, d))?;
    let Some(hook) = hook.get() else {
        return Err(mlua::Error::runtime("the VM hook could not be read back"));
    };
    lua.set_app_data(BudgetOwner { budget: budget.clone(), hook });
    restart(lua)?;
    Ok(budget)
}

/// Starts a block's count afresh (the units left over from the previous block's allowance are
/// not charged to it) and its time slice.
pub fn restart(lua: &Lua) -> mlua::Result<()> {
    let Some(owner) = lua.app_data_ref::<BudgetOwner>() else { return Ok(()) };
    let (budget, hook) = (owner.budget.clone(), owner.hook);
    drop(owner);
    budget.instructions.set(0);
    budget.since_yield.set(0);
    // The host's last turn may lie several entries back (`RunShared::last_turn_ms`).
    budget.last_turn_ms.set(budget.ctx.run.last_turn_ms.get());
    let ud = Rc::as_ptr(&budget) as *mut c_void;
    let allowance = allowance(budget.ctx.run.limits.instructions, 0);
    // SAFETY: `ud` points to the budget the app data keeps alive until after the state is
    // closed; the hook is mlua's own procedure for this state.
    unsafe { lua.exec_raw::<()>((), |state| lua_setbudget(state, Some(on_budget), ud, Some(hook), allowance)) }
}

/// Units until the next look: never past the point where the count passes the limit, so the
/// budget is enforced to the unit.
fn allowance(limit: u64, used: u64) -> lua_Integer {
    limit.saturating_sub(used).saturating_add(1).min(QUANTUM) as lua_Integer
}

/// Called by Lua when the allowance is spent (see the module documentation).
unsafe extern "C-unwind" fn on_budget(_: *mut lua_State, ud: *mut c_void, spent: lua_Integer, next: *mut lua_Integer) -> c_int {
    // SAFETY: `ud` is the budget `restart` registered, alive as long as the state.
    let budget = &*(ud as *const Budget);
    let (action, allowance) = decide(budget, spent.max(0) as u64);
    *next = allowance;
    action
}

fn decide(budget: &Budget, spent: u64) -> (c_int, lua_Integer) {
    let ctx = &budget.ctx;
    let used = budget.instructions.get().saturating_add(spent);
    budget.instructions.set(used);
    if ctx.run.stopped() {
        return (BUDGET_STOP, STOP_GRACE);
    }
    let limit = ctx.run.limits.instructions;
    if used > limit {
        ctx.run.stop_with(
            RunError::new(RunErrorKind::Limit, format!("instruction budget of {limit} exceeded in section {}", ctx.heading()))
                .in_section(&ctx.heading()),
        );
        return (BUDGET_STOP, STOP_GRACE);
    }
    let since = budget.since_yield.get().saturating_add(spent);
    budget.since_yield.set(since);
    let mut action = BUDGET_GO;
    if since >= SLICE || ctx.run.host.now_ms() - budget.last_turn_ms.get() >= TURN_MS {
        ctx.run.check_cancelled();
        if ctx.run.stopped() {
            return (BUDGET_STOP, STOP_GRACE);
        }
        budget.yield_pending.set(true);
        action = BUDGET_HOOK;
    }
    (action, allowance(limit, used))
}
