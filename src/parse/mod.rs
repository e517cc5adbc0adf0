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
    match parse_all(source) {
        (Some(prompt), errors) if errors.is_empty() => Ok(prompt),
        // No prompt comes with its error, so the fallback is never the answer.
        (_, errors) => Err(errors.into_iter().next().unwrap_or_else(|| RunError::new(RunErrorKind::Parse, "the prompt could not be read"))),
    }
}

/// Every error parsing finds, in the order found (a run stops at the first), and the prompt as
/// far as it could be read: its body is still read past a frontmatter error (with the default
/// frontmatter), but not when the frontmatter never closes, since then no body starts.
pub fn parse_all(source: &str) -> (Option<Prompt>, Vec<RunError>) {
    if source.len() > MAX_PROMPT_BYTES {
        let e = RunError::new(
            RunErrorKind::Parse,
            format!("the prompt is {} bytes; the limit is {} bytes (16 MiB)", source.len(), MAX_PROMPT_BYTES),
        );
        return (None, vec![e]);
    }
    let mut errors = Vec::new();
    let (front, body_start) = match frontmatter::split(source) {
        Err(e) => return (None, vec![e]),
        Ok(None) => (Default::default(), 0),
        Ok(Some((text, body_start))) => match frontmatter::parse(text, 2) {
            Ok(front) => (front, body_start),
            Err(e) => {
                errors.push(e);
                (Default::default(), body_start)
            }
        },
    };
    let (prompt, body_errors) = markdown::parse_body_all(source, body_start, front, &LineIndex::new(source));
    errors.extend(body_errors);
    (Some(prompt), errors)
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

    /// Byte offset -> 1-based (line, column), the column counted in characters of `source`.
    pub fn position(&self, source: &str, offset: usize) -> (usize, usize) {
        let line = self.line(offset);
        let start = self.starts[line - 1];
        let column = source.get(start..offset).map_or(1, |text| text.chars().count() + 1);
        (line, column)
    }
}
