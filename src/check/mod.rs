//! `check`: every static error of a prompt, found without running anything (docs/check.md).
//!
//! Each finding is the run error a run would end with, made by the same code the run uses (the
//! parser, the Lua compiler at the block's file line, the heading resolver, substitution's path
//! rules, the Pack requirements), so its message is the run's, word for word. Where a run stops at
//! its first error, `check` goes on and reports them all, in source order.

mod lexer;
mod references;

use mlua::{Lua, LuaOptions, StdLib};
use serde_json::Value as Json;

use crate::error::{h1_gate_failed, requirements_unmet, RunError, RunErrorKind};
use crate::host::PackSpec;
use crate::parse::LineIndex;
use crate::prompt::{Block, LuaSource, Prompt};
use lexer::Token;
use references::Target;

/// How sure a finding is to fail a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The run reports this error when it reaches the place (for a section, when it runs).
    Error,
    /// Almost surely a mistake, which a run does not fail on.
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One finding: the run error kind and message, where it is, and the section it is in.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub kind: RunErrorKind,
    pub message: String,
    /// 1-based file line and column (the column in characters; 1 where only the line is known).
    pub line: usize,
    pub column: usize,
    /// The heading of the section (`## Main`); `None` for the frontmatter, the H1 body and the
    /// shared library.
    pub section: Option<String>,
}

impl Diagnostic {
    fn error(e: RunError, section: Option<&str>) -> Self {
        Diagnostic::from_run(Severity::Error, e, section)
    }

    fn from_run(severity: Severity, e: RunError, section: Option<&str>) -> Self {
        Diagnostic {
            severity,
            kind: e.kind,
            message: e.message,
            line: e.line.unwrap_or(1),
            column: e.column.unwrap_or(1),
            section: section.map(str::to_string),
        }
    }

    fn at(mut self, (line, column): (usize, usize)) -> Self {
        (self.line, self.column) = (line, column);
        self
    }

    pub fn to_json(&self) -> Json {
        crate::obj!({
            "severity": self.severity.as_str(),
            "kind": self.kind.as_str(),
            "message": self.message,
            "line": self.line,
            "column": self.column,
            "section": self.section.clone().map_or(Json::Null, Json::from),
        })
    }
}

/// Every static error of `source`, in source order. `packs`: the host's Packs, to check `uses:`
/// against; `None` checks no Pack requirement.
pub fn check(source: &str, packs: Option<&[PackSpec]>) -> Vec<Diagnostic> {
    let (prompt, errors) = crate::parse::parse_all(source);
    let mut parsing = Vec::new();
    for e in errors {
        parsing.push(Diagnostic::error(e, None));
    }
    let Some(prompt) = prompt else { return parsing };
    let frontmatter_ok = !parsing.iter().any(|d| d.kind == RunErrorKind::Frontmatter);
    if let (Some(packs), true) = (packs, frontmatter_ok) {
        let (_, unmet) = crate::tools::catalog::build(&prompt.front.uses, packs);
        if !unmet.is_empty() {
            // In the frontmatter, so before every body error.
            parsing.insert(0, Diagnostic::error(requirements_unmet(&unmet), None).at((uses_line(source), 1)));
        }
    }
    let lines = LineIndex::new(source);
    let mut chunks = Vec::new();
    Blocks { source, lines: &lines, prompt: &prompt, found: &mut chunks }.check();
    merge(parsing, chunks)
}

/// Two lists in source order as one; at the same place, `a`'s finding first. (A merge, not a
/// sort: both lists come out of their checks in source order.)
fn merge(a: Vec<Diagnostic>, b: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut b = b.into_iter();
    let mut next = b.next();
    for d in a {
        while let Some(n) = next.take() {
            if (n.line, n.column) < (d.line, d.column) {
                out.push(n);
                next = b.next();
            } else {
                next = Some(n);
                break;
            }
        }
        out.push(d);
    }
    out.extend(next);
    out.extend(b);
    out
}

/// The line of the frontmatter's `uses:` key (where a Pack requirement comes from), else 1.
fn uses_line(source: &str) -> usize {
    let mut frontmatter = source.lines().enumerate().skip(1).take_while(|(_, l)| l.trim_end() != "---");
    frontmatter.find(|(_, l)| l.starts_with("uses")).map_or(1, |(i, _)| i + 1)
}

/// The checks of the prompt's Lua text and prose, each block's findings in source order.
struct Blocks<'a> {
    source: &'a str,
    lines: &'a LineIndex,
    prompt: &'a Prompt,
    found: &'a mut Vec<Diagnostic>,
}

/// One chunk of Lua text in the file: a block (with its prose) or the shared library.
struct Chunk<'a> {
    /// The entry it runs in (`None`: the H1 body; for the shared library, every entry).
    section: Option<usize>,
    block: Option<&'a Block>,
    lua: &'a LuaSource,
    /// Its tokens when it compiled, else the syntax error.
    compiled: Result<Vec<Token<'a>>, Diagnostic>,
}

impl<'a> Blocks<'a> {
    fn check(self) {
        // Compiling needs a Lua state, never a running one: nothing here calls what it loads.
        let Ok(lua) = Lua::new_with(StdLib::NONE, LuaOptions::new()) else { return };
        let _ = lua.set_memory_limit(crate::effects::context::Limits::default().memory_bytes);
        let p = self.prompt;
        // Chunks in file order: the H1 body's blocks and the shared library among them, then
        // each section's blocks.
        let mut chunks: Vec<Chunk<'a>> = Vec::new();
        for section in std::iter::once(None).chain((0..p.sections.len()).map(Some)) {
            let body = section.map_or(&p.h1, |i| &p.sections[i].body);
            let heading = p.entry_heading(section);
            let shown = section.map(|_| heading.as_str());
            for block in &body.blocks {
                chunks.push(Chunk { section, block: Some(block), lua: &block.lua, compiled: compile(&lua, &block.lua, &heading, shown) });
            }
            if let (None, Some(shared)) = (section, &p.shared) {
                let at = chunks.iter().position(|c| c.lua.line > shared.line).unwrap_or(chunks.len());
                chunks.insert(at, Chunk { section: None, block: None, lua: shared, compiled: compile(&lua, shared, "lua shared", None) });
            }
        }
        let shared_tokens = chunks.iter().find(|c| c.block.is_none()).and_then(|c| tokens_of(c));
        let mut out = Vec::new();
        for chunk in &chunks {
            if let Some(block) = chunk.block {
                self.prose(chunk.section, block, tokens_of(chunk), &mut out);
            }
            let tokens = match &chunk.compiled {
                Err(syntax) => {
                    out.push(syntax.clone());
                    continue;
                }
                Ok(tokens) => tokens,
            };
            // A name bound in the shared library or any block of the entry (one VM) is not the
            // Engine's function there.
            let bound = |global: &str| {
                let binds = |t: Option<&Vec<Token>>| t.is_some_and(|t| references::binds(t, global));
                binds(shared_tokens) || chunks.iter().any(|c| c.block.is_some() && c.section == chunk.section && binds(tokens_of(c)))
            };
            self.references(chunk, tokens, &bound, &mut out);
        }
        *self.found = out;
    }

    /// The position in the file of byte `at` of a chunk's code.
    fn code_position(&self, lua: &LuaSource, at: usize) -> (usize, usize) {
        let before = &lua.code[..at];
        let line = lua.line + before.matches('\n').count();
        let code_line_start = before.rfind('\n').map_or(0, |n| n + 1);
        let code_line = lua.code[code_line_start..].lines().next().unwrap_or("");
        // A fence indented by up to three spaces has its lines' indentation removed.
        let file_line = self.source.lines().nth(line - 1).unwrap_or("");
        let indent = file_line.chars().count().saturating_sub(code_line.chars().count());
        (line, indent + before[code_line_start..].chars().count() + 1)
    }

    /// Literal heading references that no entry the chunk runs in resolves: a block runs in its
    /// own entry, the shared library in every entry.
    fn references(&self, chunk: &Chunk, tokens: &[Token], bound: &dyn Fn(&str) -> bool, out: &mut Vec<Diagnostic>) {
        let p = self.prompt;
        for r in references::find(tokens) {
            if bound(r.target.global_name()) {
                continue;
            }
            let resolve = |caller: Option<usize>| match r.target {
                Target::PromptList => p.list(caller, &r.heading).map(|_| ()),
                other => p.resolve_for(caller, other.name(), &r.heading).map(|_| ()),
            };
            let Err(message) = resolve(chunk.section) else { continue };
            if chunk.block.is_none() && (0..p.sections.len()).any(|i| resolve(Some(i)).is_ok()) {
                continue;
            }
            let section = chunk.block.and(chunk.section).map(|i| p.sections[i].heading.as_str());
            let run_error = RunError::new(RunErrorKind::Lua, message);
            out.push(Diagnostic::error(run_error, section).at(self.code_position(chunk.lua, r.at)));
        }
    }

    /// Placeholders of the block's pending prose that fail whatever the run's values are: an
    /// error when the block reads `prose`, a warning when it does not (the text is never
    /// rendered, but is almost surely meant to be).
    fn prose(&self, section: Option<usize>, block: &Block, tokens: Option<&Vec<Token>>, out: &mut Vec<Diagnostic>) {
        let reads = tokens.is_some_and(|t| references::reads_prose(t));
        let severity = if reads || tokens.is_none() { Severity::Error } else { Severity::Warning };
        let heading = section.map(|i| self.prompt.sections[i].heading.as_str());
        for e in crate::subst::static_errors(&block.prose) {
            let message = e.to_string();
            let run_error = match section {
                None => h1_gate_failed(&message),
                Some(_) => RunError::new(RunErrorKind::Lua, message),
            };
            let at = self.lines.position(self.source, block.prose_at + e.offset);
            out.push(Diagnostic::from_run(severity, run_error, heading).at(at));
        }
    }
}

fn tokens_of<'c, 'a>(c: &'c Chunk<'a>) -> Option<&'c Vec<Token<'a>>> {
    c.compiled.as_ref().ok()
}

/// Compiles one chunk (never runs it): its tokens when it compiles, else its syntax error as
/// the run reports it.
fn compile<'s>(lua: &Lua, source: &'s LuaSource, chunk_name: &str, section: Option<&str>) -> Result<Vec<Token<'s>>, Diagnostic> {
    match crate::lua::load_text(lua, &source.code, source.line, chunk_name) {
        Ok(_) => Ok(lexer::tokens(&source.code)),
        Err(e) => Err(match crate::lua::load_error(e, chunk_name) {
            Ok(run_error) => Diagnostic::error(run_error.in_block(chunk_name, source.line), section),
            Err(_) => Diagnostic::error(
                RunError::at(RunErrorKind::Limit, "the Lua compiler ran out of memory reading this block", source.line, 1),
                section,
            ),
        }),
    }
}
