//! From prompt text to the [`Prompt`] model: frontmatter first, then the Markdown body.
//!
//! Parsing never renders anything: prose keeps its exact bytes, placeholders included, because
//! substitution happens only when a Lua block reads `prose` (`001`, "Parsing keeps placeholders").

pub mod frontmatter;
mod markdown;
pub mod yaml;

use crate::error::{RunError, RunErrorKind};
use crate::prompt::Prompt;

/// Prompts larger than this are refused before any parsing work.
pub const MAX_PROMPT_BYTES: usize = 16 * 1024 * 1024;

pub fn parse_prompt(source: &str) -> Result<Prompt, RunError> {
    if source.len() > MAX_PROMPT_BYTES {
        return Err(RunError::new(
            RunErrorKind::Parse,
            format!("the prompt is {} bytes; the limit is {} bytes (16 MiB)", source.len(), MAX_PROMPT_BYTES),
        ));
    }
    let lines = LineIndex::new(source);
    let (front, body_start) = match frontmatter::split(source)? {
        Some((text, body_start)) => (frontmatter::parse(text, 2)?, body_start),
        None => (Default::default(), 0),
    };
    markdown::parse_body(source, body_start, front, &lines)
}

/// Byte offset -> 1-based line number.
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(source: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(source.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    pub fn line(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }
}
