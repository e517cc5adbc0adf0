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
    let mut found: Vec<Diagnostic> = errors.into_iter().map(|e| Diagnostic::error(e, None)).collect();
    let Some(prompt) = prompt else { return found };
    let frontmatter_ok = !found.iter().any(|d| d.kind == RunErrorKind::Frontmatter);
    if let (Some(packs), true) = (packs, frontmatter_ok) {
        let (_, unmet) = crate::tools::catalog::build(&prompt.front.uses, packs);
        if !unmet.is_empty() {
            found.push(Diagnostic::error(requirements_unmet(&unmet), None).at((uses_line(source), 1)));
        }
    }
    let lines = LineIndex::new(source);
    Blocks { source, lines: &lines, prompt: &prompt, found: &mut found }.check();
    // Stable: findings at one place keep the order they were found in.
    found.sort_by_key(|d| (d.line, d.column));
    found
}

/// The line of the frontmatter's `uses:` key (where a Pack requirement comes from), else 1.
fn uses_line(source: &str) -> usize {
    source.lines().enumerate().skip(1).take_while(|(_, l)| l.trim_end() != "---").find(|(_, l)| l.starts_with("uses")).map_or(1, |(i, _)| i + 1)
}

/// The checks of the prompt's Lua text and prose.
struct Blocks<'a> {
    source: &'a str,
    lines: &'a LineIndex,
    prompt: &'a Prompt,
    found: &'a mut Vec<Diagnostic>,
}

/// A block that compiled, its tokens read.
struct Scanned<'a> {
    lua: &'a LuaSource,
    tokens: Vec<Token<'a>>,
}

impl Blocks<'_> {
    fn check(mut self) {
        // Compiling needs a Lua state, never a running one: nothing here calls what it loads.
        let Ok(lua) = Lua::new_with(StdLib::NONE, LuaOptions::new()) else { return };
        let _ = lua.set_memory_limit(crate::effects::context::Limits::default().memory_bytes);
        let p = self.prompt;
        let shared = p.shared.as_ref().and_then(|s| self.compile(&lua, s, "lua shared", None));
        let entries = std::iter::once(None).chain((0..p.sections.len()).map(Some));
        let mut scanned: Vec<(Option<usize>, Vec<(&Block, Option<Scanned>)>)> = Vec::new();
        for section in entries {
            let body = section.map_or(&p.h1, |i| &p.sections[i].body);
            let heading = p.entry_heading(section);
            let shown = section.map(|_| heading.as_str());
            let blocks = body.blocks.iter().map(|b| (b, self.compile(&lua, &b.lua, &heading, shown))).collect();
            scanned.push((section, blocks));
        }
        for (section, blocks) in &scanned {
            for (block, tokens) in blocks {
                self.prose(*section, block, tokens.as_ref());
            }
            let bound = |global: &str| {
                shared.as_ref().is_some_and(|s| references::binds(&s.tokens, global))
                    || blocks.iter().filter_map(|(_, s)| s.as_ref()).any(|s| references::binds(&s.tokens, global))
            };
            for (_, s) in blocks {
                if let Some(s) = s {
                    self.references(&[*section], s, &bound);
                }
            }
        }
        if let Some(s) = &shared {
            // The shared library runs in every entry: a reference there must resolve from one.
            let callers: Vec<Option<usize>> = std::iter::once(None).chain((0..p.sections.len()).map(Some)).collect();
            self.references(&callers, s, &|global| references::binds(&s.tokens, global));
        }
    }

    /// Compiles one chunk (never runs it): a syntax error is reported as the run reports it,
    /// and the tokens of text that compiled come back for the other checks.
    fn compile<'s>(&mut self, lua: &Lua, source: &'s LuaSource, chunk_name: &str, section: Option<&str>) -> Option<Scanned<'s>> {
        match crate::lua::load_text(lua, &source.code, source.line, chunk_name) {
            Ok(_) => Some(Scanned { lua: source, tokens: lexer::tokens(&source.code) }),
            Err(e) => {
                let diagnostic = match crate::lua::load_error(e, chunk_name) {
                    Ok(run_error) => Diagnostic::error(run_error.in_block(chunk_name, source.line), section),
                    Err(_) => Diagnostic::error(
                        RunError::at(
                            RunErrorKind::Limit,
                            "the Lua compiler ran out of memory reading this block",
                            source.line,
                            1,
                        ),
                        section,
                    ),
                };
                self.found.push(diagnostic);
                None
            }
        }
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

    /// Literal heading references that no entry among `callers` resolves.
    fn references(&mut self, callers: &[Option<usize>], s: &Scanned, bound: &dyn Fn(&str) -> bool) {
        let p = self.prompt;
        for r in references::find(&s.tokens) {
            if bound(r.target.global_name()) {
                continue;
            }
            let resolve = |caller: Option<usize>| match r.target {
                Target::PromptList => p.list(caller, &r.heading).map(|_| ()),
                other => p.resolve_for(caller, other.name(), &r.heading).map(|_| ()),
            };
            let Some(Err(message)) = callers.iter().map(|&c| resolve(c)).find(Result::is_ok).or_else(|| callers.first().map(|&c| resolve(c))) else {
                continue;
            };
            let section = callers.first().copied().flatten().map(|i| p.sections[i].heading.as_str());
            let section = if callers.len() > 1 { None } else { section };
            let run_error = RunError::new(RunErrorKind::Lua, message);
            self.found.push(Diagnostic::error(run_error, section).at(self.code_position(s.lua, r.at)));
        }
    }

    /// Placeholders of the block's pending prose that fail whatever the run's values are: an
    /// error when the block reads `prose`, a warning when it does not (the text is never
    /// rendered, but is almost surely meant to be).
    fn prose(&mut self, section: Option<usize>, block: &Block, tokens: Option<&Scanned>) {
        let reads = tokens.is_some_and(|s| references::reads_prose(&s.tokens));
        let severity = if reads || tokens.is_none() { Severity::Error } else { Severity::Warning };
        let heading = section.map(|i| self.prompt.sections[i].heading.as_str());
        for e in crate::subst::static_errors(&block.prose) {
            let message = e.to_string();
            let run_error = match section {
                None => h1_gate_failed(&message),
                Some(_) => RunError::new(RunErrorKind::Lua, message),
            };
            let at = self.lines.position(self.source, block.prose_at + e.offset);
            self.found.push(Diagnostic::from_run(severity, run_error, heading).at(at));
        }
    }
}
