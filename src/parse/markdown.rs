//! The Markdown body: headings make the section tree, top-level ```` ```lua ```` fences make
//! blocks, and everything between them stays prose with its exact source bytes (byte offsets in
//! substitution errors count from the start of that pending prose, so nothing may be re-rendered
//! or normalised here). pulldown-cmark finds the structure; the source slices supply the text.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use std::ops::Range;

use super::frontmatter::Frontmatter;
use super::LineIndex;
use crate::error::{RunError, RunErrorKind};
use crate::prompt::{Block, Body, LuaSource, Prompt, Section};

/// Where the blocks being collected belong.
struct Region {
    /// `None` while in the H1 body.
    section: Option<usize>,
    /// Start of the pending prose (just after the last heading, fence or break).
    prose_start: usize,
    /// Whether anything but blank text came before, for the off-walk marker.
    seen_content: bool,
    body: Body,
}

/// A top-level ```` ```lua ```` or ```` ```lua shared ```` fence whose code is being collected.
struct LuaFence {
    shared: bool,
    start: usize,
    end: usize,
    code: String,
}

/// The first top-level list of a section, whose items become the section's `list`.
struct ListCapture {
    /// Nesting depth of the list's own start tag; its items sit one deeper.
    depth: usize,
    items: Vec<String>,
    /// The open item's source range, and where a nested list cuts its text short.
    item: Option<(Range<usize>, Option<usize>)>,
}

/// The state of one walk over the body's pulldown-cmark events. Offsets are into the whole
/// `source`, so prose slices and line numbers need no further adjustment.
struct BodyParser<'a> {
    source: &'a str,
    lines: &'a LineIndex,
    prompt: Prompt,
    /// Where the `#` title was, to name it when a second one appears.
    title_at: Option<usize>,
    region: Region,
    /// Open container tags; 0 means the event sits at the top level of the document.
    depth: usize,
    fence: Option<LuaFence>,
    list: Option<ListCapture>,
    /// What the body refuses, in the order the walk met it. A run stops at the first; `check`
    /// reports them all, so each error site records its error and the walk goes on as if the
    /// offending construct were absent.
    errors: Vec<RunError>,
}

/// The body as far as it can be read, and every error found on the way.
pub fn parse_body_all(source: &str, body_start: usize, front: Frontmatter, lines: &LineIndex) -> (Prompt, Vec<RunError>) {
    let mut parser = BodyParser::new(source, body_start, front, lines);
    for (event, range) in Parser::new_ext(&source[body_start..], Options::empty()).into_offset_iter() {
        let r = (range.start + body_start)..(range.end + body_start);
        let step = match event {
            Event::Start(tag) => parser.start(tag, r),
            Event::End(tag_end) => parser.end(tag_end),
            Event::Text(text) => {
                parser.text(&text);
                Ok(())
            }
            Event::Rule => {
                parser.rule(r);
                Ok(())
            }
            _ => {
                parser.leaf();
                Ok(())
            }
        };
        if let Err(e) = step {
            parser.errors.push(e);
        }
    }
    let errors = std::mem::take(&mut parser.errors);
    (parser.finish(), errors)
}

impl<'a> BodyParser<'a> {
    fn new(source: &'a str, body_start: usize, front: Frontmatter, lines: &'a LineIndex) -> Self {
        BodyParser {
            source,
            lines,
            prompt: Prompt { front, title: String::new(), h1: Body::default(), shared: None, sections: Vec::new(), top: Vec::new() },
            title_at: None,
            region: Region { section: None, prose_start: body_start, seen_content: false, body: Body::default() },
            depth: 0,
            fence: None,
            list: None,
            errors: Vec::new(),
        }
    }

    fn error(&self, msg: String, offset: usize) -> RunError {
        let line = self.lines.line(offset);
        RunError::at(RunErrorKind::Parse, format!("{msg} (line {line})"), line, 1)
    }

    fn start(&mut self, tag: Tag, r: Range<usize>) -> Result<(), RunError> {
        let top = self.depth == 0;
        self.depth += 1;
        match tag {
            // A heading opens a fresh region (or, for the title, restarts the H1 body), whose
            // off-walk flag must stay clear, so it returns before the content marking below.
            Tag::Heading { level, .. } if top && is_atx(&self.source[r.clone()]) => return self.heading(level as u8, r),
            Tag::CodeBlock(CodeBlockKind::Fenced(info)) => self.code_block_start(&info, top, r)?,
            Tag::List(_) => self.list_start(top, r),
            Tag::Item => self.item_start(r),
            _ => {}
        }
        if top {
            self.region.seen_content = true;
        }
        Ok(())
    }

    fn end(&mut self, tag_end: TagEnd) -> Result<(), RunError> {
        self.depth = self.depth.saturating_sub(1);
        match tag_end {
            TagEnd::CodeBlock => self.code_block_end(),
            TagEnd::Item => {
                self.item_end();
                Ok(())
            }
            TagEnd::List(_) => {
                self.list_end();
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// `##` and deeper open a section under the nearest shallower heading; `#` is the title.
    fn heading(&mut self, level: u8, r: Range<usize>) -> Result<(), RunError> {
        let text = heading_text(&self.source[r.clone()]);
        if level == 1 {
            return self.title(text, r);
        }
        self.close_region();
        let prompt = &self.prompt;
        let idx = prompt.sections.len();
        let parent = prompt.sections.iter().rposition(|s| s.level < level);
        let heading = format!("{} {}", "#".repeat(level as usize), text);
        let siblings = match parent {
            Some(p) => &prompt.sections[p].children,
            None => &prompt.top,
        };
        let duplicate = siblings.iter().find(|&&j| prompt.sections[j].heading == heading).map(|&dup| {
            self.error(
                format!(
                    "duplicate heading `{heading}`: a sibling at line {} has the same text, and heading references must be unique",
                    prompt.sections[dup].line
                ),
                r.start,
            )
        });
        // A duplicate still opens a section (its blocks are still read), one no reference reaches.
        match (&duplicate, parent) {
            (Some(_), _) => {}
            (None, Some(p)) => self.prompt.sections[p].children.push(idx),
            (None, None) => self.prompt.top.push(idx),
        }
        self.prompt.sections.push(Section {
            heading,
            name: text,
            level,
            parent,
            children: Vec::new(),
            off_walk: false,
            body: Body::default(),
            list: None,
            line: self.lines.line(r.start),
        });
        self.region = Region { section: Some(idx), prose_start: r.end, seen_content: false, body: Body::default() };
        duplicate.map_or(Ok(()), Err)
    }

    fn title(&mut self, text: String, r: Range<usize>) -> Result<(), RunError> {
        if let Some(first) = self.title_at {
            return Err(self.error(
                format!("a prompt has one `#` title; a second `# {text}` follows the one at line {}", self.lines.line(first)),
                r.start,
            ));
        }
        if self.region.section.is_some() {
            return Err(self.error(format!("the `# {text}` title must come before every `##` section"), r.start));
        }
        self.title_at = Some(r.start);
        self.prompt.title = text;
        // Text above the title belongs to no block.
        self.region.prose_start = r.end;
        self.region.seen_content = false;
        Ok(())
    }

    /// Every fenced block must be closed, nested or not; only top-level `lua` fences are code.
    fn code_block_start(&mut self, info: &str, top: bool, r: Range<usize>) -> Result<(), RunError> {
        // An unclosed fence's text is not code: it ran on over whatever followed it.
        check_fence_closed(self.source, &r).map_err(|m| self.error(m, r.start))?;
        let info = info.trim();
        if top && (info == "lua" || info == "lua shared") {
            self.fence = Some(LuaFence { shared: info == "lua shared", start: r.start, end: r.end, code: String::new() });
        }
        Ok(())
    }

    /// The code arrives as one or more text events between the fence's start and end.
    fn text(&mut self, text: &str) {
        if let Some(f) = self.fence.as_mut() {
            f.code.push_str(text);
        }
    }

    /// A closed `lua` fence becomes a block with the prose pending before it, or the shared library.
    fn code_block_end(&mut self) -> Result<(), RunError> {
        if self.depth != 0 {
            return Ok(());
        }
        let Some(f) = self.fence.take() else { return Ok(()) };
        let code_line = self.lines.line(f.start) + 1;
        if f.shared {
            // The shared library is not a block, but like any fence it ends the pending prose.
            self.region.prose_start = f.end;
            if self.region.section.is_some() {
                return Err(self.error("a ```lua shared fence belongs in the H1 body, above the first `##` section".into(), f.start));
            }
            if self.prompt.shared.is_some() {
                return Err(self.error("a prompt holds at most one ```lua shared fence; this is the second".into(), f.start));
            }
            self.prompt.shared = Some(LuaSource { code: f.code, line: code_line });
            return Ok(());
        }
        let pending = pending_prose_range(&self.source[self.region.prose_start..f.start]);
        let prose_at = self.region.prose_start + pending.start;
        let prose = self.source[prose_at..self.region.prose_start + pending.end].to_string();
        self.region.body.blocks.push(Block { prose, prose_at, lua: LuaSource { code: f.code, line: code_line } });
        self.region.prose_start = f.end;
        self.region.seen_content = true;
        Ok(())
    }

    /// A section's first top-level list is captured; a list inside a captured item ends that
    /// item's text, since the nested list's lines are not part of it.
    fn list_start(&mut self, top: bool, r: Range<usize>) {
        if top && self.list.is_none() && self.region.section.is_some_and(|i| self.prompt.sections[i].list.is_none()) {
            self.list = Some(ListCapture { depth: self.depth, items: Vec::new(), item: None });
        } else if let Some(ListCapture { item: Some((_, cut @ None)), .. }) = self.list.as_mut() {
            *cut = Some(r.start);
        }
    }

    fn item_start(&mut self, r: Range<usize>) {
        if let Some(cap) = self.list.as_mut() {
            if self.depth == cap.depth + 1 {
                cap.item = Some((r, None));
            }
        }
    }

    fn item_end(&mut self) {
        let Some(cap) = self.list.as_mut() else { return };
        if self.depth != cap.depth {
            return;
        }
        if let Some((item_range, cut)) = cap.item.take() {
            let end = cut.unwrap_or(item_range.end);
            cap.items.push(item_text(&self.source[item_range.start..end]));
        }
    }

    /// Only the captured list's own end stores its items; nested lists end inside it.
    fn list_end(&mut self) {
        let Some(cap) = self.list.take_if(|cap| cap.depth == self.depth + 1) else { return };
        if let Some(i) = self.region.section {
            self.prompt.sections[i].list = Some(cap.items);
        }
    }

    /// A top-level thematic break ends the pending prose; one that opens a section, before any
    /// content, takes the section off the walk. A break inside a container is that container's.
    fn rule(&mut self, r: Range<usize>) {
        if self.depth != 0 {
            return;
        }
        let blank_before = self.source[self.region.prose_start..r.start].trim().is_empty();
        if let Some(i) = self.region.section {
            if self.region.body.blocks.is_empty() && !self.region.seen_content && blank_before {
                self.prompt.sections[i].off_walk = true;
            }
        }
        self.region.seen_content = true;
        self.region.prose_start = r.end;
    }

    /// Any other event (inline code, HTML, breaks) counts as content at the top level.
    fn leaf(&mut self) {
        if self.depth == 0 {
            self.region.seen_content = true;
        }
    }

    /// Hands the collected blocks to the H1 body or to the region's section.
    fn close_region(&mut self) {
        let body = std::mem::take(&mut self.region.body);
        match self.region.section {
            None => self.prompt.h1 = body,
            Some(i) => self.prompt.sections[i].body = body,
        }
    }

    fn finish(mut self) -> Prompt {
        self.close_region();
        self.prompt
    }
}

/// An ATX heading starts with `#` after at most three spaces; setext headings (a line
/// underlined with `===` or `---`) are not sections and stay prose.
fn is_atx(text: &str) -> bool {
    text.trim_start_matches(' ').starts_with('#')
}

/// The heading's text as written: markers, the optional closing `#` run and spaces removed.
fn heading_text(raw: &str) -> String {
    let line = raw.lines().next().unwrap_or("").trim();
    let after = line.trim_start_matches('#');
    let mut text = after.trim();
    // A closing sequence is a run of `#` preceded by a space (or the whole text).
    let stripped = text.trim_end_matches('#');
    if stripped.len() != text.len() && (stripped.is_empty() || stripped.ends_with(' ')) {
        text = stripped.trim_end();
    }
    text.to_string()
}

/// pulldown-cmark lets an unclosed fence run to the end of the document; Runvil refuses it,
/// since everything after it (headings and blocks included) would silently become code.
fn check_fence_closed(source: &str, r: &Range<usize>) -> Result<(), String> {
    let text = &source[r.clone()];
    // A fence inside a block quote: its lines carry the quote's markers.
    let first = unquoted(text.lines().next().unwrap_or(""));
    let opener = first.trim_start();
    let ch = opener.chars().next().unwrap_or('`');
    let len = opener.chars().take_while(|&c| c == ch).count();
    let mut lines = text.trim_end_matches(['\n', '\r']).lines();
    lines.next();
    let closed = lines.last().map(|l| {
        let t = unquoted(l).trim();
        t.len() >= len && t.chars().all(|c| c == ch)
    });
    if closed == Some(true) {
        Ok(())
    } else {
        Err(format!(
            "unclosed code fence {:?}: no closing {:?} line before the end of the prompt",
            first.trim(),
            ch.to_string().repeat(len)
        ))
    }
}

/// `line` without the block-quote markers (`>`, each with its optional space) it starts with.
fn unquoted(line: &str) -> &str {
    let mut rest = line.trim_start();
    while let Some(after) = rest.strip_prefix('>') {
        rest = after.strip_prefix(' ').unwrap_or(after).trim_start();
    }
    rest
}

/// Where the pending prose lies in `raw`: pending prose is trimmed of the blank lines around it (and the final line break), never of
/// the spaces inside its lines.
fn pending_prose_range(raw: &str) -> Range<usize> {
    let mut start = 0;
    for line in raw.split_inclusive('\n') {
        if line.trim().is_empty() {
            start += line.len();
        } else {
            break;
        }
    }
    let rest = &raw[start..];
    let mut end = rest.len();
    while end > 0 {
        let line_start = rest[..end].trim_end_matches(['\n', '\r']).rfind('\n').map(|i| i + 1).unwrap_or(0);
        let content_end = rest[..end].trim_end_matches(['\n', '\r']).len();
        if rest[line_start..content_end].trim().is_empty() {
            end = line_start;
        } else {
            end = content_end;
            break;
        }
    }
    start..start + end
}

/// The text of a list item: its source without the marker, lines trimmed and joined by `\n`.
fn item_text(raw: &str) -> String {
    let t = raw.trim_start();
    let marker_len = if t.starts_with(['-', '*', '+']) {
        1
    } else {
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && t[digits..].starts_with(['.', ')']) {
            digits + 1
        } else {
            0
        }
    };
    t[marker_len..].lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending_prose(raw: &str) -> &str {
        &raw[pending_prose_range(raw)]
    }

    #[test]
    fn pending_prose_trims_blank_lines_only() {
        assert_eq!(pending_prose("\n\nhi {{ args }}!\n\n"), "hi {{ args }}!");
        assert_eq!(pending_prose("\n  indented\n  two  \n \n"), "  indented\n  two  ");
        assert_eq!(pending_prose("\n\n"), "");
    }

    #[test]
    fn heading_text_drops_closing_sequence() {
        assert_eq!(heading_text("## Main ##\n"), "Main");
        assert_eq!(heading_text("##   Spaced out   "), "Spaced out");
        assert_eq!(heading_text("## C#"), "C#");
    }

    #[test]
    fn list_items() {
        assert_eq!(item_text("- alpha\n"), "alpha");
        assert_eq!(item_text("12) beta  gamma"), "beta  gamma");
    }
}
