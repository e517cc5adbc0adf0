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

struct LuaFence {
    shared: bool,
    start: usize,
    end: usize,
    code: String,
}

struct ListCapture {
    items: Vec<String>,
    item: Option<(Range<usize>, Option<usize>)>,
}

pub fn parse_body(source: &str, body_start: usize, front: Frontmatter, lines: &LineIndex) -> Result<Prompt, RunError> {
    let body_text = &source[body_start..];
    let parse_err = |msg: String, offset: usize| {
        let line = lines.line(offset);
        RunError::at(RunErrorKind::Parse, format!("{msg} (line {line})"), line, 1)
    };

    let mut prompt = Prompt { front, title: String::new(), h1: Body::default(), shared: None, sections: Vec::new(), top: Vec::new() };
    let mut title_seen_at: Option<usize> = None;
    let mut region = Region { section: None, prose_start: body_start, seen_content: false, body: Body::default() };
    let mut depth = 0usize;
    let mut fence: Option<LuaFence> = None;
    let mut list: Option<ListCapture> = None;
    let mut list_depth = 0usize;

    for (event, range) in Parser::new_ext(body_text, Options::empty()).into_offset_iter() {
        let r = (range.start + body_start)..(range.end + body_start);
        match event {
            Event::Start(tag) => {
                let top = depth == 0;
                let section_before = (region.section, region.prose_start);
                depth += 1;
                match tag {
                    Tag::Heading { level, .. } if top && is_atx(&source[r.clone()]) => {
                        let level = level as u8;
                        let text = heading_text(&source[r.clone()]);
                        if level == 1 {
                            if let Some(first) = title_seen_at {
                                return Err(parse_err(
                                    format!(
                                        "a prompt has one `#` title; a second `# {text}` follows the one at line {}",
                                        lines.line(first)
                                    ),
                                    r.start,
                                ));
                            }
                            if region.section.is_some() {
                                return Err(parse_err(format!("the `# {text}` title must come before every `##` section"), r.start));
                            }
                            title_seen_at = Some(r.start);
                            prompt.title = text;
                            // Text above the title belongs to no block.
                            region.prose_start = r.end;
                            region.seen_content = false;
                            continue;
                        }
                        finish_region(&mut prompt, &mut region, r.start, source);
                        let idx = prompt.sections.len();
                        let parent = prompt.sections.iter().rposition(|s| s.level < level);
                        let heading = format!("{} {}", "#".repeat(level as usize), text);
                        let siblings = match parent {
                            Some(p) => &prompt.sections[p].children,
                            None => &prompt.top,
                        };
                        if let Some(&dup) = siblings.iter().find(|&&j| prompt.sections[j].heading == heading) {
                            return Err(parse_err(
                                format!(
                                    "duplicate heading `{heading}`: a sibling at line {} has the same text, and heading references must be unique",
                                    prompt.sections[dup].line
                                ),
                                r.start,
                            ));
                        }
                        match parent {
                            Some(p) => prompt.sections[p].children.push(idx),
                            None => prompt.top.push(idx),
                        }
                        prompt.sections.push(Section {
                            heading,
                            name: text,
                            level,
                            parent,
                            children: Vec::new(),
                            off_walk: false,
                            body: Body::default(),
                            list: None,
                            line: lines.line(r.start),
                        });
                        region = Region { section: Some(idx), prose_start: r.end, seen_content: false, body: Body::default() };
                    }
                    Tag::CodeBlock(CodeBlockKind::Fenced(info)) => {
                        check_fence_closed(source, &r).map_err(|m| parse_err(m, r.start))?;
                        let info = info.trim();
                        if top && (info == "lua" || info == "lua shared") {
                            fence = Some(LuaFence { shared: info == "lua shared", start: r.start, end: r.end, code: String::new() });
                        }
                    }
                    Tag::List(_) if top && list.is_none() && region.section.is_some_and(|i| prompt.sections[i].list.is_none()) => {
                        list = Some(ListCapture { items: Vec::new(), item: None });
                        list_depth = depth;
                    }
                    Tag::Item => {
                        if let Some(cap) = list.as_mut() {
                            if depth == list_depth + 1 {
                                cap.item = Some((r.clone(), None));
                            }
                        }
                    }
                    Tag::List(_) => {
                        // A nested list ends the text of the item that holds it.
                        if let Some(ListCapture { item: Some((_, cut)), .. }) = list.as_mut() {
                            if cut.is_none() {
                                *cut = Some(r.start);
                            }
                        }
                    }
                    _ => {}
                }
                // Anything but a heading counts as content for the off-walk rule (a heading
                // starts a fresh region above, whose flag must stay clear).
                if top && region_is(&region, section_before) {
                    region.seen_content = true;
                }
            }
            Event::End(tag_end) => {
                depth = depth.saturating_sub(1);
                match tag_end {
                    TagEnd::CodeBlock if depth == 0 => {
                        if let Some(f) = fence.take() {
                            finish_fence(&mut prompt, &mut region, f, source, lines).map_err(|(m, at)| parse_err(m, at))?;
                        }
                    }
                    TagEnd::Item => {
                        if let Some(cap) = list.as_mut() {
                            if depth == list_depth {
                                if let Some((item_range, cut)) = cap.item.take() {
                                    let end = cut.unwrap_or(item_range.end);
                                    cap.items.push(item_text(&source[item_range.start..end]));
                                }
                            }
                        }
                    }
                    TagEnd::List(_) if depth + 1 == list_depth => {
                        if let (Some(cap), Some(i)) = (list.take(), region.section) {
                            prompt.sections[i].list = Some(cap.items);
                        }
                    }
                    _ => {}
                }
            }
            Event::Text(text) => {
                if let Some(f) = fence.as_mut() {
                    f.code.push_str(&text);
                }
            }
            Event::Rule if depth == 0 => {
                let blank_before = source[region.prose_start..r.start].trim().is_empty();
                if let Some(i) = region.section {
                    if region.body.blocks.is_empty() && !region.seen_content && blank_before {
                        prompt.sections[i].off_walk = true;
                    }
                }
                region.seen_content = true;
                region.prose_start = r.end;
            }
            _ => {
                if depth == 0 {
                    region.seen_content = true;
                }
            }
        }
    }
    finish_region(&mut prompt, &mut region, source.len(), source);
    Ok(prompt)
}

/// True while the event did not open a new region (a heading replaces the region).
fn region_is(region: &Region, before: (Option<usize>, usize)) -> bool {
    (region.section, region.prose_start) == before
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
    let first = text.lines().next().unwrap_or("");
    let opener = first.trim_start();
    let ch = opener.chars().next().unwrap_or('`');
    let len = opener.chars().take_while(|&c| c == ch).count();
    let mut lines = text.trim_end_matches(['\n', '\r']).lines();
    lines.next();
    let closed = lines.last().map(|l| {
        let t = l.trim();
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

fn finish_fence(prompt: &mut Prompt, region: &mut Region, f: LuaFence, source: &str, lines: &LineIndex) -> Result<(), (String, usize)> {
    let code_line = lines.line(f.start) + 1;
    if f.shared {
        if region.section.is_some() {
            return Err(("a ```lua shared fence belongs in the H1 body, above the first `##` section".into(), f.start));
        }
        if prompt.shared.is_some() {
            return Err(("a prompt holds at most one ```lua shared fence; this is the second".into(), f.start));
        }
        prompt.shared = Some(LuaSource { code: f.code, line: code_line });
        // The shared library is not a block, but like any fence it ends the pending prose.
        region.prose_start = f.end;
        return Ok(());
    }
    let prose = pending_prose(&source[region.prose_start..f.start]);
    region.body.blocks.push(Block { prose, lua: LuaSource { code: f.code, line: code_line } });
    region.prose_start = f.end;
    region.seen_content = true;
    Ok(())
}

fn finish_region(prompt: &mut Prompt, region: &mut Region, _end: usize, _source: &str) {
    let body = std::mem::take(&mut region.body);
    match region.section {
        None => prompt.h1 = body,
        Some(i) => prompt.sections[i].body = body,
    }
}

/// Pending prose is trimmed of the blank lines around it (and the final line break), never of
/// the spaces inside its lines.
pub fn pending_prose(raw: &str) -> String {
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
    rest[..end].to_string()
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
