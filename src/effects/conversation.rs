//! An entry's conversation (`messages`, `002`): its records, append-only and the truth a host's
//! copy follows; the model role it runs on once `models.use` chose one; the `models.loop` round
//! in progress; and what the last round reported (`sys.model`, `sys.reply_finish_reason`).
//! `round` runs the protocol over it; a record is charged against the memory ceiling before it
//! joins (`EntryCtx::push_record`).

use serde_json::Value as Json;
use std::cell::{Ref, RefCell, RefMut};
use std::rc::Rc;

use crate::tools::{Advertised, Record, Target, ToolCall};

pub struct Conversation {
    /// The conversation's id for the host (`Host::call_model_round`), unique within the run.
    id: u64,
    messages: RefCell<Vec<Record>>,
    /// `models.use(role)` for this entry.
    role: RefCell<Option<String>>,
    round: RefCell<Round>,
    /// `sys.model` and `sys.reply_finish_reason`, set by the entry's model rounds.
    model_facts: RefCell<Option<(String, String)>>,
}

impl Conversation {
    pub fn new(id: u64) -> Conversation {
        Conversation {
            id,
            messages: RefCell::new(Vec::new()),
            role: RefCell::new(None),
            round: RefCell::new(Round::default()),
            model_facts: RefCell::new(None),
        }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn messages(&self) -> Ref<'_, Vec<Record>> {
        self.messages.borrow()
    }

    /// Appends a record already charged against the memory ceiling (`EntryCtx::push_record`).
    pub(super) fn push(&self, record: Record) {
        self.messages.borrow_mut().push(record);
    }

    pub fn role(&self) -> Option<String> {
        self.role.borrow().clone()
    }

    pub fn set_role(&self, role: String) {
        *self.role.borrow_mut() = Some(role);
    }

    pub fn round(&self) -> Ref<'_, Round> {
        self.round.borrow()
    }

    pub fn round_mut(&self) -> RefMut<'_, Round> {
        self.round.borrow_mut()
    }

    /// `(sys.model, sys.reply_finish_reason)`, once a model round has answered.
    pub fn model_facts(&self) -> Option<(String, String)> {
        self.model_facts.borrow().clone()
    }

    pub fn set_model_facts(&self, model: String, finish_reason: String) {
        *self.model_facts.borrow_mut() = Some((model, finish_reason));
    }
}

/// The round in progress: the calls of the latest reply and their results so far.
#[derive(Default)]
pub struct Round {
    /// The text of the reply that asked for the calls (the assistant record's content).
    pub content: String,
    /// The reply's `reasoning_content`, kept on the assistant record.
    pub reasoning: Option<String>,
    pub calls: Vec<(ToolCall, Target)>,
    pub results: Vec<Option<String>>,
    /// Whether any round of this loop asked for tools (for the empty-reply rule).
    pub had_calls: bool,
    pub rounds: u64,
    /// The loop's tool list, built at its first round and kept for the rest (see [`ToolList`]).
    pub tools: Option<Rc<ToolList>>,
}

/// What a loop's rounds advertise, built once per loop instead of once per round: the list is
/// fixed from the first round (`FIXED_LIST`), except that the task built-ins join it while an
/// allowlist is set. Sharing one `wire` value across rounds also lets the host see (by pointer)
/// that the tool list did not change, so it is not shipped again.
pub struct ToolList {
    /// Whether the task built-ins were in the list (an allowlist was set) when it was built.
    pub(super) with_tasks: bool,
    pub advertised: Vec<Advertised>,
    /// The tools as the request carries them; `None` when the round offers none.
    pub wire: Option<Rc<Json>>,
}
