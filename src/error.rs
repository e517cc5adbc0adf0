//! Errors at their two levels: [`RunErrorKind`], how a failed run is classified for the host, and
//! [`ErrorValueKind`], the `kind` of an error value a prompt can catch; an uncaught error value
//! ends the run with the run error kind [`ErrorValueKind::run_kind`] maps it to.

use std::fmt;

/// The run error kinds (docs/language.md, "The sandbox and the Engine globals"), spelled as the
/// JS API reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunErrorKind {
    Frontmatter,
    Parse,
    RequirementsUnmet,
    Lua,
    Tool,
    Model,
    Vfs,
    Determinism,
    Limit,
    Cancelled,
}

impl RunErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RunErrorKind::Frontmatter => "Frontmatter",
            RunErrorKind::Parse => "Parse",
            RunErrorKind::RequirementsUnmet => "RequirementsUnmet",
            RunErrorKind::Lua => "Lua",
            RunErrorKind::Tool => "Tool",
            RunErrorKind::Model => "Model",
            RunErrorKind::Vfs => "Vfs",
            RunErrorKind::Determinism => "Determinism",
            RunErrorKind::Limit => "Limit",
            RunErrorKind::Cancelled => "Cancelled",
        }
    }
}

/// The `kind` of an error value a prompt can catch with `pcall` (`002`, `004`): what Rust hands
/// bootstrap.lua to raise, and what the block runner reads back when nothing caught it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorValueKind {
    Lua,
    Tool,
    /// `tools.call` named no tool of the run (the value carries `name`).
    UnboundTool,
    /// A model called a tool the section did not offer (the value carries `name`).
    OutOfScopeTool,
    /// `models.loop` ran out of rounds.
    RoundCap,
    Store,
    Model,
    Cancelled,
}

impl ErrorValueKind {
    const ALL: [ErrorValueKind; 8] = [
        ErrorValueKind::Lua,
        ErrorValueKind::Tool,
        ErrorValueKind::UnboundTool,
        ErrorValueKind::OutOfScopeTool,
        ErrorValueKind::RoundCap,
        ErrorValueKind::Store,
        ErrorValueKind::Model,
        ErrorValueKind::Cancelled,
    ];

    /// The text of the error value's `kind` field.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorValueKind::Lua => "lua",
            ErrorValueKind::Tool => "tool",
            ErrorValueKind::UnboundTool => "unbound_tool",
            ErrorValueKind::OutOfScopeTool => "out_of_scope_tool",
            ErrorValueKind::RoundCap => "round_cap",
            ErrorValueKind::Store => "store",
            ErrorValueKind::Model => "model",
            ErrorValueKind::Cancelled => "cancelled",
        }
    }

    /// The kind an error value's `kind` field names (`None` for text no Engine error carries:
    /// a prompt's own error table).
    pub fn from_field(text: &str) -> Option<ErrorValueKind> {
        ErrorValueKind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// The run error an uncaught error value of this kind ends the run with.
    pub fn run_kind(self) -> RunErrorKind {
        match self {
            ErrorValueKind::Tool | ErrorValueKind::UnboundTool | ErrorValueKind::OutOfScopeTool | ErrorValueKind::RoundCap => {
                RunErrorKind::Tool
            }
            ErrorValueKind::Store => RunErrorKind::Vfs,
            ErrorValueKind::Model => RunErrorKind::Model,
            ErrorValueKind::Cancelled => RunErrorKind::Cancelled,
            ErrorValueKind::Lua => RunErrorKind::Lua,
        }
    }
}

/// A failed run: its kind, its message, and where it happened when that is known.
#[derive(Debug, Clone, PartialEq)]
pub struct RunError {
    pub kind: RunErrorKind,
    pub message: String,
    /// 1-based file position: where `Frontmatter` and `Parse` errors are, and the line of the block
    /// (or the line Lua named) for errors a block ended with.
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// The heading of the section (or `# Title` of the H1 pass) the error ended, if any.
    pub section: Option<String>,
    /// When an uncaught error value ended a chain: its fields (`kind`, `message` and the extras a
    /// chapter lists), so the chain's caller, joiner or fanout raises or reports the same value.
    pub value: Option<Box<serde_json::Value>>,
}

impl RunError {
    pub fn new(kind: RunErrorKind, message: impl Into<String>) -> Self {
        RunError { kind, message: message.into(), line: None, column: None, section: None, value: None }
    }

    pub fn at(kind: RunErrorKind, message: impl Into<String>, line: usize, column: usize) -> Self {
        RunError { kind, message: message.into(), line: Some(line), column: Some(column), section: None, value: None }
    }

    /// The error value's kind, when an error value ended the chain.
    pub fn value_kind(&self) -> Option<ErrorValueKind> {
        self.value.as_ref()?.get("kind")?.as_str().and_then(ErrorValueKind::from_field)
    }

    pub fn in_section(mut self, heading: &str) -> Self {
        if self.section.is_none() {
            self.section = Some(heading.to_string());
        }
        self
    }

    /// Gives an error a block ended with its file line, if it has none: the line Lua's message
    /// names (`## Main:9: boom`, the chunk being named after `heading`), else the block's first
    /// line (an Engine error: a store refusal, a substitution failure, the result's type).
    pub fn in_block(mut self, heading: &str, block_line: usize) -> Self {
        if self.line.is_none() {
            let named = self.message.strip_prefix(heading).and_then(|rest| rest.strip_prefix(':')).and_then(|rest| {
                let digits = rest.find(|c: char| !c.is_ascii_digit()).filter(|&n| n > 0 && rest[n..].starts_with(':'))?;
                rest[..digits].parse().ok()
            });
            self.line = Some(named.unwrap_or(block_line));
        }
        self
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.message)
    }
}

impl std::error::Error for RunError {}

/// The requirements notice that opens every `RequirementsUnmet` message (`002`, `001`).
pub const REQUIREMENTS_NOTICE: &str = "the environment cannot satisfy this prompt:";

/// The `RequirementsUnmet` error listing what the environment lacks, one `- ...` line each.
pub fn requirements_unmet(lines: &[String]) -> RunError {
    RunError::new(RunErrorKind::RequirementsUnmet, format!("{REQUIREMENTS_NOTICE}\n{}", lines.join("\n")))
}

/// A placeholder of the H1 body that failed to render: the H1 body is the prompt's gate, so its
/// failure is a requirement the run's values do not meet.
pub fn h1_gate_failed(message: &str) -> RunError {
    RunError::new(RunErrorKind::RequirementsUnmet, format!("{REQUIREMENTS_NOTICE}\n- the H1 gate failed: {message}"))
}
