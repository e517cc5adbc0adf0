//! The YAML a frontmatter is written in, read into a [`Yaml`] tree.
//!
//! A hand-written reader of the YAML 1.2 that frontmatter needs: block maps and lists (with the
//! compact `- key: value` form and lists at their key's indentation), flow collections, plain,
//! single- and double-quoted scalars (every escape, line folding), literal and folded block
//! scalars (`|`, `>`, with chomping and indentation indicators), comments, and anchors with
//! aliases. Plain scalars resolve by the core schema (`null`, `~`, booleans, decimal, `0x`, `0o`
//! and `0b` integers, floats, `.inf`, `.nan`); everything quoted or in a block scalar is a string.
//!
//! What it refuses, each with a message and the place: tags (`!`), explicit keys (`?`),
//! directives, a second document, tabs as indentation, control characters, a byte order mark
//! after the start, duplicate keys, collections nested deeper than [`MAX_DEPTH`], and aliases
//! that would copy more than [`MAX_ALIAS_VALUES`] values (the "billion laughs"). Every step
//! moves forward through the text, so the time is linear in its length (plus the copies aliases
//! make, which the cap bounds); nothing here can panic on any input.

use std::cmp::Ordering;
use std::collections::BTreeMap;

/// A YAML value. Maps keep their entries in document order.
#[derive(Debug, Clone, PartialEq)]
pub enum Yaml {
    Null,
    Bool(bool),
    /// Always within `i64::MIN..=u64::MAX`; integers beyond are read as floats.
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Yaml>),
    Map(Vec<(Yaml, Yaml)>),
}

impl Yaml {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Yaml::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Yaml::Int(i) => u64::try_from(*i).ok(),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Yaml::Int(i) => i64::try_from(*i).ok(),
            _ => None,
        }
    }
}

/// A reading failure: what is wrong, and where (1-based line and column of the text, the column
/// counted in characters).
#[derive(Debug, Clone, PartialEq)]
pub struct YamlError {
    pub message: String,
    pub line: usize,
    pub column: usize,
}

/// The deepest nesting of collections, block and flow together.
pub const MAX_DEPTH: usize = 64;

/// How many values all aliases together may copy ("billion laughs" is a few lines of aliases
/// that copy a billion values).
pub const MAX_ALIAS_VALUES: usize = 10_000;

/// How many bytes of text all aliases together may copy (one long anchored string, aliased
/// many times, is the same attack).
pub const MAX_ALIAS_BYTES: usize = 1 << 20;

/// Reads one YAML document. Text holding only blank lines and comments is [`Yaml::Null`].
pub fn parse(text: &str) -> Result<Yaml, YamlError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // YAML line breaks are LF, CRLF or a lone CR; the reader knows only LF.
    let normalised;
    let text = if text.contains('\r') {
        normalised = text.replace("\r\n", "\n").replace('\r', "\n");
        normalised.as_str()
    } else {
        text
    };
    let mut p = Reader {
        src: text,
        b: text.as_bytes(),
        at: Spot { pos: 0, line: 1, line_start: 0 },
        depth: 0,
        anchors: BTreeMap::new(),
        copied: (0, 0),
    };
    p.check_characters()?;
    p.skip_to_content()?;
    if p.eof() {
        return Ok(Yaml::Null);
    }
    let m = p.column0();
    let doc = p.node(m, -1, true)?;
    p.skip_to_content()?;
    if !p.eof() {
        return Err(p.error("expected the end of the document, found more text"));
    }
    Ok(doc)
}

/// A place in the text: byte offset, 1-based line, byte offset of that line's start.
#[derive(Clone, Copy)]
struct Spot {
    pos: usize,
    line: usize,
    line_start: usize,
}

struct Reader<'a> {
    src: &'a str,
    b: &'a [u8],
    at: Spot,
    depth: usize,
    /// Anchor name -> its value, and what copying it costs.
    anchors: BTreeMap<String, (Yaml, Cost)>,
    /// What aliases have copied so far.
    copied: (usize, usize),
}

/// Where a block node is read: the context decides whether a block collection may start there.
#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    /// After `key:` on the same line: a scalar or flow collection only.
    MapValue,
    /// After `- `, or at the start of a line: a compact map or list may start here.
    SeqEntry,
}

/// How an inline node was written: a map key may follow only some of them.
#[derive(Clone, Copy, PartialEq)]
enum Form {
    Plain,
    /// Quoted or a flow collection; `multiline` when it spans lines (no key then).
    Delimited {
        multiline: bool,
    },
    Alias,
}

type R<T> = Result<T, YamlError>;

/// What a value holds: values (itself included), bytes of text, and its nesting depth.
#[derive(Clone, Copy)]
struct Cost {
    values: usize,
    bytes: usize,
    depth: usize,
}

fn cost(v: &Yaml) -> Cost {
    let mut c = Cost { values: 1, bytes: 0, depth: 0 };
    let add = |item: &Yaml, c: &mut Cost| {
        let i = cost(item);
        c.values = c.values.saturating_add(i.values);
        c.bytes = c.bytes.saturating_add(i.bytes);
        c.depth = c.depth.max(i.depth + 1);
    };
    match v {
        Yaml::Str(s) => c.bytes = s.len(),
        Yaml::Seq(items) => items.iter().for_each(|i| add(i, &mut c)),
        Yaml::Map(entries) => entries.iter().for_each(|(k, v)| {
            add(k, &mut c);
            add(v, &mut c);
        }),
        _ => {}
    }
    if matches!(v, Yaml::Seq(_) | Yaml::Map(_)) {
        c.depth = c.depth.max(1);
    }
    c
}

fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

fn is_flow_indicator(c: u8) -> bool {
    matches!(c, b',' | b'[' | b']' | b'{' | b'}')
}

impl<'a> Reader<'a> {
    fn eof(&self) -> bool {
        self.at.pos >= self.b.len()
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.at.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.b.get(self.at.pos + ahead).copied()
    }

    /// True when the byte `ahead` is a blank, a line break or the end.
    fn blank_or_end_at(&self, ahead: usize) -> bool {
        self.peek_at(ahead).is_none_or(|c| is_blank(c) || c == b'\n')
    }

    /// Moves over one character (the whole UTF-8 sequence), counting lines.
    fn bump(&mut self) {
        let Some(c) = self.src[self.at.pos..].chars().next() else { return };
        self.at.pos += c.len_utf8();
        if c == '\n' {
            self.at.line += 1;
            self.at.line_start = self.at.pos;
        }
    }

    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(is_blank) {
            self.at.pos += 1;
        }
    }

    fn skip_line(&mut self) {
        while self.peek().is_some_and(|c| c != b'\n') {
            self.at.pos += 1;
        }
    }

    /// The 0-based column of the cursor, in characters.
    fn column0(&self) -> usize {
        self.src[self.at.line_start..self.at.pos].chars().count()
    }

    fn error_at(&self, spot: Spot, message: impl Into<String>) -> YamlError {
        let column = self.src.get(spot.line_start..spot.pos).map_or(0, |s| s.chars().count()) + 1;
        YamlError { message: message.into(), line: spot.line, column }
    }

    fn error(&self, message: impl Into<String>) -> YamlError {
        self.error_at(self.at, message)
    }

    /// YAML text is printable: no control characters but tab and line breaks, and no byte
    /// order mark after the start.
    fn check_characters(&self) -> R<()> {
        let (mut line, mut line_start) = (1, 0);
        for (i, c) in self.src.char_indices() {
            if c == '\n' {
                (line, line_start) = (line + 1, i + 1);
                continue;
            }
            let bad = match c {
                '\t' => false,
                '\u{feff}' => true,
                c => (c.is_control() && c != '\u{85}') || matches!(c, '\u{fffe}' | '\u{ffff}'),
            };
            if bad {
                let what = if c == '\u{feff}' {
                    "a byte order mark (U+FEFF) is allowed only at the start"
                } else {
                    "control characters are not allowed"
                };
                return Err(self.error_at(Spot { pos: i, line, line_start }, what));
            }
        }
        Ok(())
    }

    /// Moves to the next content: over blanks, comments and line breaks. A line whose content
    /// is indented with a tab is an error; so is a line that would start another document.
    fn skip_to_content(&mut self) -> R<()> {
        let mut line_start = self.at.pos == self.at.line_start;
        loop {
            let before = self.at.pos;
            self.skip_blanks();
            match self.peek() {
                None => return Ok(()),
                Some(b'#') if line_start || self.at.pos > before || self.at.pos == 0 => self.skip_line(),
                Some(b'\n') => {
                    self.bump();
                    line_start = true;
                    continue;
                }
                Some(_) => {
                    if line_start {
                        let indent = &self.b[self.at.line_start..self.at.pos];
                        if indent.contains(&b'\t') {
                            let tab = indent.iter().position(|&c| c == b'\t').unwrap_or(0);
                            let spot = Spot { pos: self.at.line_start + tab, ..self.at };
                            return Err(self.error_at(spot, "a tab cannot indent a line (YAML indents with spaces)"));
                        }
                        if indent.is_empty() && self.document_marker() {
                            return Err(self.error("a frontmatter holds one YAML document: found a `---` or `...` line"));
                        }
                    }
                    return Ok(());
                }
            }
        }
    }

    fn document_marker(&self) -> bool {
        let rest = &self.b[self.at.pos..];
        (rest.starts_with(b"---") || rest.starts_with(b"...")) && self.blank_or_end_at(3)
    }

    /// After a value: the rest of the line may hold only blanks and a comment (a `#` right after
    /// a closing quote or bracket starts one too).
    fn end_of_line(&mut self) -> R<()> {
        self.skip_blanks();
        match self.peek() {
            None | Some(b'\n') => Ok(()),
            Some(b'#') => {
                self.skip_line();
                Ok(())
            }
            Some(b':') => Err(self.error("mapping values are not allowed in this context")),
            Some(_) => Err(self.error("unexpected text after a value")),
        }
    }

    /// One collection deeper; `spot` is where that collection starts.
    fn enter_at(&mut self, spot: Spot) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error_at(spot, format!("collections nested deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }

    fn enter(&mut self) -> R<()> {
        self.enter_at(self.at)
    }

    /// The value after `key:` or `-`, on the same line or on the lines below, more indented than
    /// `parent` (the column of that key or dash). A list may sit at its key's own column.
    fn block_value(&mut self, parent: usize, ctx: Ctx) -> R<Yaml> {
        let before = self.at.pos;
        self.skip_blanks();
        let comment = self.peek() == Some(b'#') && self.at.pos > before;
        if !(self.eof() || self.peek() == Some(b'\n') || comment) {
            let m = self.column0();
            return self.node(m, parent as isize, ctx == Ctx::SeqEntry);
        }
        self.skip_line();
        self.below(parent as isize, ctx == Ctx::MapValue, None)
    }

    /// A node that starts on a later line, more indented than `parent` (or a list at `parent`'s
    /// own column after a key); nothing there is null.
    fn below(&mut self, parent: isize, after_key: bool, anchor: Option<(String, Spot)>) -> R<Yaml> {
        let back = self.at;
        self.skip_to_content()?;
        let c = if self.eof() { 0 } else { self.column0() };
        let value = if !self.eof() && c as isize > parent {
            self.node(c, parent, true)?
        } else if !self.eof() && after_key && c as isize == parent && self.dash_entry() {
            self.enter()?;
            let seq = self.block_seq(c, true)?;
            self.depth -= 1;
            seq
        } else {
            // The next content belongs to an outer collection: leave the cursor before it.
            self.at = back;
            Yaml::Null
        };
        if let Some((name, _)) = anchor {
            self.define(name, &value);
        }
        Ok(value)
    }

    fn dash_entry(&self) -> bool {
        self.peek() == Some(b'-') && self.blank_or_end_at(1)
    }

    /// A block node whose first character is under the cursor, at column `m`. `collections`:
    /// whether a block list or map may start here.
    fn node(&mut self, m: usize, parent: isize, collections: bool) -> R<Yaml> {
        let anchor = self.properties()?;
        if anchor.is_some() {
            self.skip_blanks();
            if self.eof() || matches!(self.peek(), Some(b'\n' | b'#')) {
                self.end_of_line()?;
                return self.below(parent, false, anchor);
            }
        }
        let value = match self.peek() {
            Some(b'-') if self.blank_or_end_at(1) => {
                // A list cannot start after an anchor on its line: the anchor goes on the line
                // above (`key: &name`, then the list).
                if !collections || anchor.is_some() {
                    return Err(self.error("block sequence entries are not allowed in this context"));
                }
                self.enter()?;
                let seq = self.block_seq(m, false)?;
                self.depth -= 1;
                seq
            }
            Some(b'?') if self.blank_or_end_at(1) => return Err(self.error("explicit keys (`? key`) are not supported")),
            Some(b'|' | b'>') => self.block_scalar(parent)?,
            _ => {
                let key_spot = self.at;
                let (candidate, form) = self.inline_node()?;
                let back = self.at;
                self.skip_blanks();
                if self.peek() == Some(b':') && self.blank_or_end_at(1) {
                    if !collections {
                        return Err(self.error("mapping values are not allowed in this context"));
                    }
                    if form == (Form::Delimited { multiline: true }) {
                        return Err(self.error_at(key_spot, "a map key must be on one line"));
                    }
                    let key = resolve_plain(candidate, form);
                    if let Some((name, _)) = anchor {
                        self.define(name, &key);
                    }
                    self.enter_at(key_spot)?;
                    let map = self.block_map(m, key, key_spot)?;
                    self.depth -= 1;
                    return Ok(map);
                }
                self.at = back;
                let value = match (form, candidate) {
                    (Form::Plain, Yaml::Str(first)) => resolve(self.plain_continued(first, parent)?),
                    (_, value) => value,
                };
                self.end_of_line()?;
                value
            }
        };
        if let Some((name, _)) = anchor {
            self.define(name, &value);
        }
        Ok(value)
    }

    /// `&anchor` before a node (returned with its place); a tag is refused.
    fn properties(&mut self) -> R<Option<(String, Spot)>> {
        let mut anchor = None;
        loop {
            match self.peek() {
                Some(b'&') => {
                    if anchor.is_some() {
                        return Err(self.error("a node can have only one anchor"));
                    }
                    let spot = self.at;
                    self.at.pos += 1;
                    let name = self.anchor_name()?;
                    anchor = Some((name, spot));
                    self.skip_blanks();
                }
                Some(b'!') => return Err(self.error("tags (`!`) are not supported in frontmatter")),
                _ => return Ok(anchor),
            }
        }
    }

    fn anchor_name(&mut self) -> R<String> {
        let start = self.at.pos;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_') {
            self.at.pos += 1;
        }
        if self.at.pos == start || !self.peek().is_none_or(|c| is_blank(c) || c == b'\n' || is_flow_indicator(c) || c == b':') {
            return Err(self.error("an anchor or alias name is letters, digits, '-' and '_'"));
        }
        Ok(self.src[start..self.at.pos].to_string())
    }

    /// Records an anchor (a later one of the same name replaces it).
    fn define(&mut self, name: String, value: &Yaml) {
        self.anchors.insert(name, (value.clone(), cost(value)));
    }

    /// `*name`: a copy of the anchored value, within the alias budgets and the nesting limit.
    fn alias(&mut self) -> R<Yaml> {
        let spot = self.at;
        self.at.pos += 1;
        let name = self.anchor_name()?;
        let Some((value, c)) = self.anchors.get(&name) else {
            return Err(self.error_at(spot, format!("unknown anchor `{name}`")));
        };
        let copied = (self.copied.0.saturating_add(c.values), self.copied.1.saturating_add(c.bytes));
        if copied.0 > MAX_ALIAS_VALUES {
            return Err(self.error_at(spot, format!("aliases copy more than {MAX_ALIAS_VALUES} values")));
        }
        if copied.1 > MAX_ALIAS_BYTES {
            return Err(self.error_at(spot, format!("aliases copy more than {MAX_ALIAS_BYTES} bytes of text")));
        }
        if self.depth + c.depth > MAX_DEPTH {
            return Err(self.error_at(spot, format!("collections nested deeper than {MAX_DEPTH} levels")));
        }
        let value = value.clone();
        self.copied = copied;
        Ok(value)
    }

    /// A node on one line in block context (a flow collection or a quoted scalar may go on over
    /// lines): a candidate for a map key. A plain scalar comes back as its raw text.
    fn inline_node(&mut self) -> R<(Yaml, Form)> {
        let line = self.at.line;
        match self.peek() {
            Some(b'[' | b'{') => {
                let v = self.flow_collection()?;
                Ok((v, Form::Delimited { multiline: self.at.line != line }))
            }
            Some(b'"' | b'\'') => {
                let s = self.quoted()?;
                Ok((Yaml::Str(s), Form::Delimited { multiline: self.at.line != line }))
            }
            Some(b'*') => Ok((self.alias()?, Form::Alias)),
            Some(b':') if self.blank_or_end_at(1) => Err(self.error("a map key is missing before `:`")),
            Some(c) if self.plain_can_start(c, false) => Ok((Yaml::Str(self.plain_line(false)), Form::Plain)),
            _ => Err(self.error("found character that cannot start any token")),
        }
    }

    fn plain_can_start(&self, c: u8, flow: bool) -> bool {
        match c {
            b'-' | b'?' | b':' => !(self.blank_or_end_at(1) || flow && self.peek_at(1).is_some_and(is_flow_indicator)),
            b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' => false,
            b' ' | b'\t' | b'\n' => false,
            _ => true,
        }
    }

    /// Plain text up to the end of the line, `: `, ` #` (and, in flow context, a flow indicator),
    /// trailing blanks left out.
    fn plain_line(&mut self, flow: bool) -> String {
        let start = self.at.pos;
        let mut end = start;
        // Byte by byte: every stop is ASCII, and UTF-8 never uses an ASCII byte inside a
        // character, so `end` always falls after a whole character.
        while let Some(c) = self.peek() {
            match c {
                b'\n' => break,
                b':' if self.blank_or_end_at(1) || (flow && self.peek_at(1).is_some_and(is_flow_indicator)) => break,
                b'#' if self.at.pos > start && is_blank(self.b[self.at.pos - 1]) => break,
                c if flow && is_flow_indicator(c) => break,
                c => {
                    self.at.pos += 1;
                    if !is_blank(c) {
                        end = self.at.pos;
                    }
                }
            }
        }
        self.at.pos = end;
        self.src[start..end].to_string()
    }

    /// Continues a block plain scalar over the lines below that are more indented than `parent`,
    /// folding line breaks as YAML does (one break is a space; each blank line a `\n`).
    fn plain_continued(&mut self, mut text: String, parent: isize) -> R<String> {
        loop {
            let back = self.at;
            self.skip_blanks();
            if self.peek() != Some(b'\n') {
                self.at = back;
                return Ok(text);
            }
            let mut breaks = 0;
            while self.peek() == Some(b'\n') {
                self.bump();
                breaks += 1;
                let indent = self.b[self.at.pos..].iter().take_while(|&&c| c == b' ').count();
                self.at.pos += indent;
                self.skip_blanks();
                let c = self.peek();
                if c == Some(b'\n') {
                    continue;
                }
                if c.is_none() || c == Some(b'#') || indent as isize <= parent || (indent == 0 && self.document_marker()) {
                    self.at = back;
                    return Ok(text);
                }
            }
            if breaks == 1 {
                text.push(' ');
            } else {
                text.extend(std::iter::repeat_n('\n', breaks - 1));
            }
            text.push_str(&self.plain_line(false));
            if self.peek() == Some(b':') {
                return Err(self.error("mapping values are not allowed in this context"));
            }
        }
    }

    /// Moves to the next content and answers whether it continues the block at column `m`:
    /// false at the end or at a line to its left (the block ended), an error at a line further
    /// right (`items` names what the block's lines hold, for the message).
    fn next_in_block(&mut self, m: usize, items: &str) -> R<bool> {
        self.skip_to_content()?;
        if self.eof() {
            return Ok(false);
        }
        let c = self.column0();
        if c > m {
            return Err(self.error(format!("this line is indented more than {items}")));
        }
        Ok(c == m)
    }

    /// A block map at column `m` whose first key (read at `spot`) is given; the cursor is at its `:`.
    fn block_map(&mut self, m: usize, first: Yaml, spot: Spot) -> R<Yaml> {
        let mut entries = Vec::new();
        let mut spots = Vec::new();
        let (mut key, mut key_spot) = (first, spot);
        loop {
            self.at.pos += 1; // the `:`
            let value = self.block_value(m, Ctx::MapValue)?;
            entries.push((key, value));
            spots.push(key_spot);
            if !self.next_in_block(m, "the keys of its map")? {
                break;
            }
            if self.dash_entry() {
                return Err(self.error("did not find expected key: a `-` list entry where the map expects its next key"));
            }
            if self.peek() == Some(b'?') && self.blank_or_end_at(1) {
                return Err(self.error("explicit keys (`? key`) are not supported"));
            }
            key_spot = self.at;
            let anchor = self.properties()?;
            let (k, form) = self.inline_node()?;
            key = resolve_plain(k, form);
            if let Some((name, _)) = anchor {
                self.define(name, &key);
            }
            self.skip_blanks();
            if !(self.peek() == Some(b':') && self.blank_or_end_at(1)) {
                return Err(self.error("could not find expected ':' after a map key"));
            }
            if form == (Form::Delimited { multiline: true }) {
                return Err(self.error_at(key_spot, "a map key must be on one line"));
            }
        }
        self.check_duplicates(&entries, &spots)?;
        Ok(Yaml::Map(entries))
    }

    /// A block list at column `m`, the cursor at its first `-`. `at_key_column`: the list is a
    /// map value written at its key's column, so a line at `m` without a dash ends it.
    fn block_seq(&mut self, m: usize, at_key_column: bool) -> R<Yaml> {
        let mut items = Vec::new();
        loop {
            self.at.pos += 1; // the `-`
            items.push(self.block_value(m, Ctx::SeqEntry)?);
            if !self.next_in_block(m, "the entries of its list")? {
                break;
            }
            if !self.dash_entry() {
                if at_key_column {
                    break;
                }
                return Err(self.error("did not find expected '-' indicator"));
            }
        }
        Ok(Yaml::Seq(items))
    }

    /// `|` or `>`: the lines below more indented than `parent`.
    fn block_scalar(&mut self, parent: isize) -> R<Yaml> {
        let folded = self.peek() == Some(b'>');
        self.at.pos += 1;
        let (mut chomp, mut explicit) = (None, None);
        for _ in 0..2 {
            match self.peek() {
                Some(c @ (b'+' | b'-')) if chomp.is_none() => chomp = Some(c),
                Some(c @ b'1'..=b'9') if explicit.is_none() => explicit = Some((c - b'0') as isize),
                _ => break,
            }
            self.at.pos += 1;
        }
        if !self.blank_or_end_at(0) && self.peek() != Some(b'#') {
            return Err(self.error("a block scalar header is `|` or `>`, then optionally `-` or `+` and an indentation digit"));
        }
        self.end_of_line()?;
        let base = parent.max(0);
        let mut indent = explicit.map(|d| (base + d).max(1) as usize);
        let mut out = String::new();
        let mut pending_breaks = 0usize;
        let mut seen_content = false;
        let mut previous_more_indented = false;
        // Whether the last content line ended with a line break (the end of the text has none).
        let mut last_break = false;
        loop {
            // The cursor is at the line break that ends the previous line (or at the end).
            if self.peek() != Some(b'\n') {
                break;
            }
            let back = self.at;
            self.bump();
            let spaces = self.b[self.at.pos..].iter().take_while(|&&c| c == b' ').count();
            let line_end = self.b[self.at.pos..].iter().position(|&c| c == b'\n').map_or(self.b.len(), |i| self.at.pos + i);
            // A line of spaces no longer than the indentation is an empty line; a longer one
            // holds its extra spaces as text.
            let blank = self.b[self.at.pos..line_end].iter().all(|&c| c == b' ');
            if blank && indent.is_none_or(|w| spaces <= w) {
                pending_breaks += 1;
                self.at.pos = line_end;
                continue;
            }
            let width = *indent.get_or_insert(spaces);
            if spaces < width || spaces as isize <= parent {
                self.at = back;
                break;
            }
            self.at.pos += width;
            let text = &self.src[self.at.pos..line_end];
            let more_indented = text.starts_with([' ', '\t']);
            if seen_content {
                if folded && pending_breaks == 0 && !previous_more_indented && !more_indented {
                    out.push(' ');
                } else {
                    let extra = usize::from(!folded || previous_more_indented || more_indented);
                    out.extend(std::iter::repeat_n('\n', pending_breaks + extra));
                }
            } else {
                out.extend(std::iter::repeat_n('\n', pending_breaks));
            }
            out.push_str(text);
            (pending_breaks, seen_content, previous_more_indented) = (0, true, more_indented);
            last_break = line_end < self.b.len();
            self.at.pos = line_end;
        }
        // The final break and the trailing blank lines, as the chomping indicator says.
        match chomp {
            Some(b'-') => {}
            Some(_) => out.extend(std::iter::repeat_n('\n', usize::from(last_break) + pending_breaks)),
            None if last_break => out.push('\n'),
            None => {}
        }
        Ok(Yaml::Str(out))
    }

    /// A single- or double-quoted scalar, folded over lines.
    fn quoted(&mut self) -> R<String> {
        let spot = self.at;
        let double = self.peek() == Some(b'"');
        self.at.pos += 1;
        let mut out = String::new();
        let mut blanks = String::new();
        loop {
            let Some(c) = self.src[self.at.pos..].chars().next() else {
                return Err(self.error_at(spot, "found unexpected end of stream"));
            };
            match c {
                '"' if double => {
                    self.at.pos += 1;
                    out.push_str(&blanks);
                    break;
                }
                '\'' if !double => {
                    out.push_str(&blanks);
                    blanks.clear();
                    self.at.pos += 1;
                    if self.peek() != Some(b'\'') {
                        break;
                    }
                    out.push('\'');
                    self.at.pos += 1;
                }
                ' ' | '\t' => {
                    blanks.push(c);
                    self.at.pos += 1;
                }
                '\n' => {
                    blanks.clear();
                    let breaks = self.fold_breaks();
                    if breaks == 1 {
                        out.push(' ');
                    } else {
                        out.extend(std::iter::repeat_n('\n', breaks - 1));
                    }
                }
                '\\' if double => {
                    out.push_str(&blanks);
                    blanks.clear();
                    if self.peek_at(1) == Some(b'\n') {
                        // An escaped line break joins the lines without a space.
                        self.at.pos += 1;
                        let breaks = self.fold_breaks();
                        out.extend(std::iter::repeat_n('\n', breaks - 1));
                        continue;
                    }
                    out.push(self.escape()?);
                }
                c => {
                    out.push_str(&blanks);
                    blanks.clear();
                    out.push(c);
                    self.at.pos += c.len_utf8();
                }
            }
        }
        Ok(out)
    }

    /// At a line break inside a quoted scalar: moves past it, the blank lines after it and the
    /// next line's leading blanks; returns how many breaks there were.
    fn fold_breaks(&mut self) -> usize {
        let mut breaks = 0;
        while self.peek() == Some(b'\n') {
            self.bump();
            breaks += 1;
            self.skip_blanks();
        }
        breaks
    }

    /// A double-quoted escape; the cursor is at the backslash.
    fn escape(&mut self) -> R<char> {
        let spot = self.at;
        self.at.pos += 1;
        let Some(e) = self.src[self.at.pos..].chars().next() else {
            return Err(self.error_at(spot, "found unexpected end of stream"));
        };
        self.at.pos += e.len_utf8();
        let simple = match e {
            '0' => '\0',
            'a' => '\u{7}',
            'b' => '\u{8}',
            't' | '\t' => '\t',
            'n' => '\n',
            'v' => '\u{b}',
            'f' => '\u{c}',
            'r' => '\r',
            'e' => '\u{1b}',
            ' ' => ' ',
            '"' => '"',
            '/' => '/',
            '\\' => '\\',
            'N' => '\u{85}',
            '_' => '\u{a0}',
            'L' => '\u{2028}',
            'P' => '\u{2029}',
            'x' | 'u' | 'U' => {
                let digits = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex = self.src.get(self.at.pos..self.at.pos + digits).filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()));
                let Some(hex) = hex else {
                    return Err(self.error_at(spot, "did not find expected hexdecimal number"));
                };
                self.at.pos += digits;
                let code = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
                return code.ok_or_else(|| self.error_at(spot, "found invalid Unicode character escape code"));
            }
            _ => return Err(self.error_at(spot, "found unknown escape character")),
        };
        Ok(simple)
    }

    /// Blanks, line breaks and comments between flow tokens.
    fn flow_space(&mut self) {
        loop {
            let before = self.at.pos;
            self.skip_blanks();
            match self.peek() {
                Some(b'\n') => self.bump(),
                Some(b'#') if self.at.pos > before || self.at.pos == self.at.line_start => self.skip_line(),
                _ => return,
            }
        }
    }

    /// `[...]` or `{...}`, the cursor at the opening bracket.
    fn flow_collection(&mut self) -> R<Yaml> {
        self.enter()?;
        let open = self.peek();
        self.at.pos += 1;
        let (close, expected) =
            if open == Some(b'[') { (b']', "did not find expected ',' or ']'") } else { (b'}', "did not find expected ',' or '}'") };
        let mut items = Vec::new();
        let mut entries = Vec::new();
        let mut spots = Vec::new();
        loop {
            self.flow_space();
            match self.peek() {
                Some(c) if c == close => {
                    self.at.pos += 1;
                    break;
                }
                None => return Err(self.error(expected)),
                _ => {}
            }
            let spot = self.at;
            let key =
                if open == Some(b'{') && self.peek() == Some(b':') && self.blank_or_end_at(1) { Yaml::Null } else { self.flow_node()? };
            self.flow_space();
            let pair = self.peek() == Some(b':');
            if pair && self.at.line != spot.line {
                return Err(self.error_at(spot, "a map key must be on one line"));
            }
            if open == Some(b'[') && !pair {
                items.push(key);
            } else {
                let value = if pair {
                    self.at.pos += 1;
                    self.flow_space();
                    if matches!(self.peek(), Some(b',')) || self.peek() == Some(close) {
                        Yaml::Null
                    } else {
                        self.flow_node()?
                    }
                } else {
                    Yaml::Null
                };
                if open == Some(b'[') {
                    items.push(Yaml::Map(vec![(key, value)]));
                } else {
                    entries.push((key, value));
                    spots.push(spot);
                }
            }
            self.flow_space();
            match self.peek() {
                Some(b',') => self.at.pos += 1,
                Some(c) if c == close => {
                    self.at.pos += 1;
                    break;
                }
                _ => return Err(self.error(expected)),
            }
        }
        self.depth -= 1;
        if open == Some(b'[') {
            return Ok(Yaml::Seq(items));
        }
        self.check_duplicates(&entries, &spots)?;
        Ok(Yaml::Map(entries))
    }

    /// One node inside a flow collection.
    fn flow_node(&mut self) -> R<Yaml> {
        let anchor = self.properties()?;
        self.flow_space();
        let value = match self.peek() {
            Some(b'[' | b'{') => self.flow_collection()?,
            Some(b'"' | b'\'') => Yaml::Str(self.quoted()?),
            Some(b'*') => self.alias()?,
            Some(b'?') if self.blank_or_end_at(1) => return Err(self.error("explicit keys (`? key`) are not supported")),
            Some(c) if self.plain_can_start(c, true) => resolve(self.flow_plain()),
            _ if anchor.is_some() => Yaml::Null,
            _ => return Err(self.error("did not find expected node content")),
        };
        if let Some((name, _)) = anchor {
            self.define(name, &value);
        }
        Ok(value)
    }

    /// A plain scalar in flow context, which may go on over lines.
    fn flow_plain(&mut self) -> String {
        let mut text = self.plain_line(true);
        loop {
            let back = self.at;
            self.skip_blanks();
            if self.peek() != Some(b'\n') {
                self.at = back;
                return text;
            }
            let mut breaks = 0;
            while self.peek() == Some(b'\n') {
                self.bump();
                self.skip_blanks();
                breaks += 1;
            }
            let go_on = match self.peek() {
                Some(c) => self.plain_can_start(c, true) || (matches!(c, b'-' | b'?') && !self.peek_at(1).is_some_and(is_flow_indicator)),
                None => false,
            };
            if !go_on || self.peek() == Some(b'#') {
                self.at = back;
                return text;
            }
            if breaks == 1 {
                text.push(' ');
            } else {
                text.extend(std::iter::repeat_n('\n', breaks - 1));
            }
            text.push_str(&self.plain_line(true));
        }
    }

    /// A map may not hold a key twice; the error points at the second one.
    fn check_duplicates(&self, entries: &[(Yaml, Yaml)], spots: &[Spot]) -> R<()> {
        if entries.len() < 2 {
            return Ok(());
        }
        let order = crate::sort::order_by(entries.len(), &|a, b| compare(&entries[a].0, &entries[b].0));
        let second = order.windows(2).filter(|w| compare(&entries[w[0]].0, &entries[w[1]].0) == Ordering::Equal).map(|w| w[1]).min();
        let Some(i) = second else { return Ok(()) };
        let key = &entries[i].0;
        let message = match key {
            Yaml::Null => "duplicate entry with null key".to_string(),
            Yaml::Bool(b) => format!("duplicate entry with key `{b}`"),
            Yaml::Int(n) => format!("duplicate entry with key {n}"),
            // serde_json's float writer is in the module already; Rust's `{}` for f64 is not needed.
            Yaml::Float(f) => {
                format!("duplicate entry with key {}", serde_json::Number::from_f64(*f).map_or_else(|| "NaN".into(), |n| n.to_string()))
            }
            Yaml::Str(s) => format!("duplicate entry with key {s:?}"),
            Yaml::Seq(_) | Yaml::Map(_) => "duplicate entry in YAML map".to_string(),
        };
        Err(self.error_at(spots.get(i).copied().unwrap_or(self.at), message))
    }
}

fn rank(v: &Yaml) -> u8 {
    match v {
        Yaml::Null => 0,
        Yaml::Bool(_) => 1,
        Yaml::Int(_) => 2,
        Yaml::Float(_) => 3,
        Yaml::Str(_) => 4,
        Yaml::Seq(_) => 5,
        Yaml::Map(_) => 6,
    }
}

/// A total order of values, for finding equal keys (`0.0` and `-0.0` are equal, as YAML sees them).
fn compare(a: &Yaml, b: &Yaml) -> Ordering {
    match (a, b) {
        (Yaml::Bool(x), Yaml::Bool(y)) => x.cmp(y),
        (Yaml::Int(x), Yaml::Int(y)) => x.cmp(y),
        (Yaml::Float(x), Yaml::Float(y)) if x == y => Ordering::Equal,
        (Yaml::Float(x), Yaml::Float(y)) => x.total_cmp(y),
        (Yaml::Str(x), Yaml::Str(y)) => x.cmp(y),
        (Yaml::Seq(x), Yaml::Seq(y)) => x.iter().zip(y).map(|(a, b)| compare(a, b)).find(|o| o.is_ne()).unwrap_or(x.len().cmp(&y.len())),
        (Yaml::Map(x), Yaml::Map(y)) => x
            .iter()
            .zip(y)
            .map(|((ka, va), (kb, vb))| compare(ka, kb).then_with(|| compare(va, vb)))
            .find(|o| o.is_ne())
            .unwrap_or(x.len().cmp(&y.len())),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// An inline node's value: a plain scalar comes from [`Reader::inline_node`] as its text.
fn resolve_plain(v: Yaml, form: Form) -> Yaml {
    match (form, v) {
        (Form::Plain, Yaml::Str(s)) => resolve(s),
        (_, v) => v,
    }
}

/// A plain scalar's value by the YAML 1.2 core schema.
fn resolve(text: String) -> Yaml {
    match text.as_str() {
        "" | "~" | "null" | "Null" | "NULL" => return Yaml::Null,
        "true" | "True" | "TRUE" => return Yaml::Bool(true),
        "false" | "False" | "FALSE" => return Yaml::Bool(false),
        _ => {}
    }
    if let Some(i) = integer(&text) {
        return Yaml::Int(i);
    }
    if !leading_zero_digits(&text) {
        if let Some(f) = float(&text) {
            return Yaml::Float(f);
        }
    }
    Yaml::Str(text)
}

/// Digits after a leading zero (`007`) are a string in YAML 1.2, neither integer nor float.
fn leading_zero_digits(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    s.len() > 1 && s.starts_with('0') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

fn integer(s: &str) -> Option<i128> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if body.starts_with(['+', '-']) {
        return None;
    }
    let (radix, digits) = match body.get(..2) {
        Some("0x") => (16, &body[2..]),
        Some("0o") => (8, &body[2..]),
        Some("0b") => (2, &body[2..]),
        _ if leading_zero_digits(s) => return None,
        _ => (10, body),
    };
    if digits.starts_with(['+', '-']) {
        return None;
    }
    let magnitude = u128::from_str_radix(digits, radix).ok()?;
    let value = if negative { 0i128.checked_sub_unsigned(magnitude)? } else { i128::try_from(magnitude).ok()? };
    (i128::from(i64::MIN)..=i128::from(u64::MAX)).contains(&value).then_some(value)
}

fn float(s: &str) -> Option<f64> {
    let unsigned = match s.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => s,
    };
    match unsigned {
        ".inf" | ".Inf" | ".INF" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" if unsigned.len() == s.len() => return Some(f64::NAN),
        _ => {}
    }
    crate::float_text::parse_finite(unsigned)
}
