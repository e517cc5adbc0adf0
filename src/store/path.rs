//! Store paths and glob patterns (`004`, "Store paths", "Listing files with glob"): the nine
//! path rules in their fixed order, the pattern rules, and a bounded glob matcher.

/// The rule a bad path (or pattern) broke: its `rule` tag and the sentence in the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Empty,
    TooLong,
    Absolute,
    Control,
    Backslash,
    EmptySegment,
    Traversal,
    UnsafeSuffix,
    ReservedName,
    /// A pattern that uses `**` other than as a whole segment.
    Wildcard,
}

impl Rule {
    pub fn tag(self) -> &'static str {
        match self {
            Rule::Empty => "empty",
            Rule::TooLong => "too_long",
            Rule::Absolute => "absolute",
            Rule::Control => "control",
            Rule::Backslash => "backslash",
            Rule::EmptySegment => "empty_segment",
            Rule::Traversal => "traversal",
            Rule::UnsafeSuffix => "unsafe_suffix",
            Rule::ReservedName => "reserved_name",
            Rule::Wildcard => "wildcard",
        }
    }

    pub fn path_reason(self) -> &'static str {
        match self {
            Rule::Empty => "path is empty",
            Rule::TooLong => "path is too long",
            Rule::Absolute => "path is absolute",
            Rule::Control => "path contains a control character",
            Rule::Backslash => "path contains a backslash",
            Rule::EmptySegment => "path contains an empty segment",
            Rule::Traversal => "path contains a traversal segment",
            Rule::UnsafeSuffix => "path segment ends in an unsafe character",
            Rule::ReservedName => "path contains a reserved device name",
            Rule::Wildcard => "** must be a whole path segment",
        }
    }

    pub fn pattern_reason(self) -> &'static str {
        match self {
            Rule::Empty => "pattern is empty",
            Rule::TooLong => "pattern is too long",
            Rule::Control => "pattern contains a control character",
            Rule::Backslash => "pattern contains a backslash",
            Rule::Wildcard => "** must be a whole path segment",
            other => other.path_reason(),
        }
    }
}

pub const MAX_PATH_BYTES: usize = 1024;

fn is_control(c: char) -> bool {
    (c as u32) < 0x20 || c as u32 == 0x7f
}

const DEVICES: &[&str] = &["CON", "PRN", "AUX", "NUL"];

fn is_device(base: &str) -> bool {
    let upper = base.to_ascii_uppercase();
    if DEVICES.contains(&upper.as_str()) {
        return true;
    }
    let b = upper.as_bytes();
    b.len() == 4 && (upper.starts_with("COM") || upper.starts_with("LPT")) && (b'1'..=b'9').contains(&b[3])
}

/// Checks a store path: the whole-path rules first (empty, length, absolute, control,
/// backslash), then each segment from the left (empty, traversal, unsafe suffix, device name).
pub fn check_path(path: &str) -> Result<(), Rule> {
    if path.is_empty() {
        return Err(Rule::Empty);
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(Rule::TooLong);
    }
    if path.starts_with('/') {
        return Err(Rule::Absolute);
    }
    if path.chars().any(is_control) {
        return Err(Rule::Control);
    }
    if path.contains('\\') {
        return Err(Rule::Backslash);
    }
    for segment in path.split('/') {
        if segment.is_empty() {
            return Err(Rule::EmptySegment);
        }
        if segment == "." || segment == ".." {
            return Err(Rule::Traversal);
        }
        if segment.ends_with('.') || segment.ends_with(' ') {
            return Err(Rule::UnsafeSuffix);
        }
        let base = segment.split('.').next().unwrap_or(segment);
        if is_device(base) {
            return Err(Rule::ReservedName);
        }
    }
    Ok(())
}

/// A checked glob pattern: its segments and whether it selects directories (trailing `/`).
#[derive(Debug, Clone)]
pub struct Pattern {
    segments: Vec<String>,
    pub dirs: bool,
}

pub fn parse_pattern(pattern: &str) -> Result<Pattern, Rule> {
    if pattern.is_empty() {
        return Err(Rule::Empty);
    }
    if pattern.len() > MAX_PATH_BYTES {
        return Err(Rule::TooLong);
    }
    if pattern.chars().any(is_control) {
        return Err(Rule::Control);
    }
    if pattern.contains('\\') {
        return Err(Rule::Backslash);
    }
    let (body, dirs) = match pattern.strip_suffix('/') {
        Some(b) if !b.is_empty() => (b, true),
        _ => (pattern, false),
    };
    let segments: Vec<String> = body.split('/').map(str::to_string).collect();
    if segments.iter().any(|s| s.contains("**") && s != "**") {
        return Err(Rule::Wildcard);
    }
    Ok(Pattern { segments, dirs })
}

impl Pattern {
    /// Whether `path` matches. `**` spans zero or more whole segments, `*` any run of characters
    /// within a segment; every other character (`?` and `[` included) matches itself (`004`,
    /// "Pattern syntax": there is no escape syntax). Bounded: a table of
    /// (pattern segment, path segment) pairs, each pair decided once, so no pattern can force
    /// exponential backtracking.
    pub fn matches(&self, path: &str) -> bool {
        let parts: Vec<&str> = path.split('/').collect();
        if !self.segments.iter().any(|seg| seg == "**") {
            // The common case: one pattern segment per path segment.
            return parts.len() == self.segments.len() && self.segments.iter().zip(&parts).all(|(p, t)| segment_matches(p, t));
        }
        let (p, s) = (self.segments.len(), parts.len());
        // reach[i][j]: pattern segments i.. can match path segments j..
        let mut reach = vec![vec![false; s + 1]; p + 1];
        reach[p][s] = true;
        for i in (0..p).rev() {
            for j in (0..=s).rev() {
                reach[i][j] = if self.segments[i] == "**" {
                    reach[i + 1][j] || (j < s && reach[i][j + 1])
                } else {
                    j < s && reach[i + 1][j + 1] && segment_matches(&self.segments[i], parts[j])
                };
            }
        }
        reach[0][0]
    }
}

/// `*` within one segment, greedy with one backtrack point: linear in practice and
/// O(pattern x text) at worst. Bytes are enough: `*` is ASCII and never splits a character.
fn segment_matches(pattern: &str, text: &str) -> bool {
    if !pattern.contains('*') {
        return pattern == text;
    }
    wildcard(pattern.as_bytes(), text.as_bytes(), b'*')
}

fn wildcard(p: &[u8], t: &[u8], any: u8) -> bool {
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && p[i] != any && p[i] == t[j] {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == any {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    while i < p.len() && p[i] == any {
        i += 1;
    }
    i == p.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_rules_in_order() {
        for ok in ["a.txt", "src/a.rs", "secret/path.txt", "console.txt", "com10.txt", ".config/x", "a b/c", "é/ü"] {
            assert_eq!(check_path(ok), Ok(()), "{ok}");
        }
        let cases = [
            ("", Rule::Empty),
            ("/abs", Rule::Absolute),
            ("/a\tb", Rule::Absolute),
            ("a\nb", Rule::Control),
            ("a\u{7f}", Rule::Control),
            ("a\\b", Rule::Backslash),
            ("a//b", Rule::EmptySegment),
            ("a/", Rule::EmptySegment),
            ("../a", Rule::Traversal),
            ("a/./b", Rule::Traversal),
            ("a./b", Rule::UnsafeSuffix),
            ("a /b", Rule::UnsafeSuffix),
            ("con", Rule::ReservedName),
            ("x/Lpt9.txt", Rule::ReservedName),
            ("nul.tar.gz", Rule::ReservedName),
            ("aux/../x", Rule::ReservedName),
        ];
        for (path, rule) in cases {
            assert_eq!(check_path(path), Err(rule), "{path:?}");
        }
        assert_eq!(check_path(&"a".repeat(1024)), Ok(()));
        assert_eq!(check_path(&format!("/{}", "a".repeat(1024))), Err(Rule::TooLong));
        assert_eq!(check_path(&"é".repeat(513)), Err(Rule::TooLong));
    }

    fn m(p: &str, path: &str) -> bool {
        parse_pattern(p).unwrap().matches(path)
    }

    #[test]
    fn glob_matching() {
        assert!(m("src/*.rs", "src/a.rs"));
        assert!(!m("src/*.rs", "src/deep/c.rs"));
        assert!(m("src/**/*.rs", "src/deep/c.rs"));
        assert!(m("src/**/*.rs", "src/a.rs"));
        assert!(m("**/z2.rs", "z2.rs"));
        assert!(m("a/**/b.rs", "a/b.rs"));
        assert!(m("**", "x/y/z"));
        assert!(!m("*.txt", "a/b.txt"));
        assert!(m("a/*.txt", "a/b.txt"));
        assert!(m("?.md", "?.md"));
        assert!(!m("?.md", "a.md"));
        assert!(m("a*b*c", "aXbYc"));
        assert_eq!(parse_pattern("a**").unwrap_err(), Rule::Wildcard);
        assert!(parse_pattern("notes/*/").unwrap().dirs);
    }

    #[test]
    fn pathological_patterns_stay_fast() {
        let pattern = format!("{}b", "*a".repeat(40));
        let text = "a".repeat(1000);
        assert!(!m(&pattern, &text));
        let deep = format!("{}x", "**/".repeat(200));
        assert!(!m(&deep, &vec!["a"; 200].join("/")));
    }
}
