//! Run errors: how a failed run is classified and described to the host.

use std::fmt;

/// The run error kinds of `DECISIONS.md` ("Run error kinds"), spelled as the JS API reports them.
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

/// A failed run: its kind, its message, and where it happened when that is known.
#[derive(Debug, Clone, PartialEq)]
pub struct RunError {
    pub kind: RunErrorKind,
    pub message: String,
    /// 1-based file position, for `Frontmatter` and `Parse` errors.
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// The heading of the section (or `# Title` of the H1 pass) the error ended, if any.
    pub section: Option<String>,
}

impl RunError {
    pub fn new(kind: RunErrorKind, message: impl Into<String>) -> Self {
        RunError { kind, message: message.into(), line: None, column: None, section: None }
    }

    pub fn at(kind: RunErrorKind, message: impl Into<String>, line: usize, column: usize) -> Self {
        RunError { kind, message: message.into(), line: Some(line), column: Some(column), section: None }
    }

    pub fn in_section(mut self, heading: &str) -> Self {
        if self.section.is_none() {
            self.section = Some(heading.to_string());
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
