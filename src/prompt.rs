//! The parsed prompt: what the walk and the block runner execute. Built once per run by
//! `parse::parse_prompt`, then only read.

use crate::parse::frontmatter::Frontmatter;

#[derive(Debug, Clone)]
pub struct Prompt {
    pub front: Frontmatter,
    /// The H1 title text (`Greet` for `# Greet`); empty when the prompt has no H1.
    pub title: String,
    /// Blocks of the H1 body, run once by the H1 pass before the walk.
    pub h1: Body,
    /// The one ```` ```lua shared ```` fence of the H1 body, replayed into every section VM.
    pub shared: Option<LuaSource>,
    /// Every `##`-or-deeper section, in file order.
    pub sections: Vec<Section>,
    /// Indices of the top-level sections, the ones the main walk visits.
    pub top: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Section {
    /// The heading reference, markers included: `## Main`.
    pub heading: String,
    /// The heading text alone: `Main` (what `sys.section_name` and events report).
    pub name: String,
    pub level: u8,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// A leading `---` took the section off the walk: fall-through skips it.
    pub off_walk: bool,
    pub body: Body,
    /// The items of the first Markdown list in the section (`prompt.list`).
    pub list: Option<Vec<String>>,
    pub line: usize,
}

/// The Lua blocks of a section (or of the H1 body), each with the pending prose above it.
#[derive(Debug, Clone, Default)]
pub struct Body {
    pub blocks: Vec<Block>,
}

#[derive(Debug, Clone)]
pub struct Block {
    /// The pending prose the block reads as `prose`: the text since the nearest preceding
    /// heading, lua fence or thematic break, trimmed of surrounding blank lines, unrendered.
    pub prose: String,
    /// Byte offset in the prompt file where the prose starts (placeholder positions).
    pub prose_at: usize,
    pub lua: LuaSource,
}

#[derive(Debug, Clone)]
pub struct LuaSource {
    pub code: String,
    /// File line of the first code line, so Lua's error positions are file positions.
    pub line: usize,
}

impl Prompt {
    /// The heading an entry is known by in messages and events: the section's, or `# Title` for
    /// the H1 body (`None`).
    pub fn entry_heading(&self, section: Option<usize>) -> String {
        match section {
            Some(i) => self.sections[i].heading.clone(),
            // A prompt without a `#` title still names its H1 body (never a bare `# `).
            None if self.title.is_empty() => "# (untitled)".to_string(),
            None => format!("# {}", self.title),
        }
    }

    /// The sections a caller can address: its siblings (same parent) and its direct children.
    /// `None` is the H1 pass, whose visible set is the top-level sections.
    pub fn visible_from(&self, caller: Option<usize>) -> Vec<usize> {
        match caller {
            None => self.top.clone(),
            Some(i) => {
                let s = &self.sections[i];
                let siblings = match s.parent {
                    Some(p) => self.sections[p].children.clone(),
                    None => self.top.clone(),
                };
                siblings.into_iter().filter(|&j| j != i).chain(s.children.iter().copied()).collect()
            }
        }
    }

    /// The sections at the same level as `i` (its parent's children, or the top level), in file
    /// order, `i` included.
    pub fn level_of(&self, i: usize) -> Vec<usize> {
        match self.sections[i].parent {
            Some(p) => self.sections[p].children.clone(),
            None => self.top.clone(),
        }
    }

    /// [`Prompt::resolve`] for the Engine function `what` (`call`, `jump`, ...), whose name
    /// opens the not-found message.
    pub fn resolve_for(&self, caller: Option<usize>, what: &str, reference: &str) -> Result<usize, String> {
        self.resolve(caller, reference).map_err(|m| format!("{what}: {m}"))
    }

    /// The list items of the section `heading` names from `caller` (`prompt.list`), or the
    /// message `prompt.list` raises.
    pub fn list(&self, caller: Option<usize>, heading: &str) -> Result<&Vec<String>, String> {
        let i = self.resolve_for(caller, "prompt.list", heading)?;
        let s = &self.sections[i];
        s.list.as_ref().ok_or_else(|| format!("prompt.list: section {:?} holds no Markdown list", s.heading))
    }

    /// Resolves a heading reference (trimmed, exact text) among the sections visible from
    /// `caller`; on failure, the message lists the visible headings.
    pub fn resolve(&self, caller: Option<usize>, reference: &str) -> Result<usize, String> {
        let wanted = reference.trim();
        let visible = self.visible_from(caller);
        visible.iter().copied().find(|&i| self.sections[i].heading == wanted).ok_or_else(|| {
            let names: Vec<String> = visible.iter().map(|&i| format!("{:?}", self.sections[i].heading)).collect();
            format!("no section {:?} is visible from here; visible sections: [{}]", wanted, names.join(", "))
        })
    }
}
