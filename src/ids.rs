//! The grammar of the names that refer to Packs and tools (`002`, "Pack ids, tool ids, and wire
//! names"): `/`-separated segments for Pack ids, `uses:` entries and tool ids, and the alias form
//! for role labels, argument names and local tool aliases. It sits below both the frontmatter
//! parser and the tool catalog so that a name the prompt declares and a name the host registers
//! are judged by the same rules and refused with the same words.

/// The alias grammar as error messages spell it.
pub const ALIAS_GRAMMAR: &str = "[A-Za-z][A-Za-z0-9_-]{0,63}";

/// Why a `/`-separated name breaks the segment grammar, or `None` when every segment is valid.
/// Segments are checked left to right, each against every rule before the next, so the message
/// describes the first faulty segment (`Acme/` reports the letters, not the empty segment).
pub fn segment_error(name: &str) -> Option<&'static str> {
    for segment in name.split('/') {
        if segment.is_empty() {
            return Some("segments must not be empty");
        }
        if segment.chars().any(is_control) {
            return Some("segments must not contain a control character");
        }
        if !segment.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'-' | b'_' | b'.')) {
            return Some("segments may contain only lowercase ASCII letters, digits, '-', '_', '.'");
        }
    }
    None
}

/// A Pack id is one valid segment.
pub fn pack_id_error(name: &str) -> Option<&'static str> {
    segment_error(name).or_else(|| name.contains('/').then_some("a Pack id is one segment, such as `web`, with no '/'"))
}

/// A `uses:` entry is a Pack id (`web`, short for `runvil/web`) or `vendor/name`.
pub fn uses_entry_error(entry: &str) -> Option<&'static str> {
    segment_error(entry).or_else(|| {
        (entry.split('/').count() > 2).then_some("a uses entry is a Pack id, such as `web`, or vendor/name, such as `acme/web`")
    })
}

/// The Pack id a `uses:` entry or host Pack name stands for: its last segment, since a run holds
/// one Pack per id whoever the vendor is (`acme/web` and `web` are both Pack `web`).
pub fn pack_id(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// Role labels, argument names and local tool aliases: a letter, then up to 63 letters, digits,
/// `_` or `-` (see [`ALIAS_GRAMMAR`]).
pub fn is_alias(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && b.len() <= 64 && b[0].is_ascii_alphabetic() && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
}

/// The C0 controls and DEL, as the store's path rules count them.
fn is_control(c: char) -> bool {
    (c as u32) < 0x20 || c as u32 == 0x7f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments() {
        assert_eq!(segment_error("acme/web.v2_x-y"), None);
        assert_eq!(segment_error("acme//web"), Some("segments must not be empty"));
        assert_eq!(segment_error("Acme/"), Some("segments may contain only lowercase ASCII letters, digits, '-', '_', '.'"));
        assert_eq!(segment_error("W\t"), Some("segments must not contain a control character"));
        assert_eq!(segment_error("w\u{7f}"), Some("segments must not contain a control character"));
    }

    #[test]
    fn pack_ids_and_uses_entries() {
        assert_eq!(pack_id_error("web"), None);
        assert_eq!(pack_id_error("acme/web"), Some("a Pack id is one segment, such as `web`, with no '/'"));
        assert_eq!(uses_entry_error("acme/web"), None);
        assert!(uses_entry_error("acme/web/fetch").unwrap().starts_with("a uses entry is a Pack id"));
        assert_eq!(pack_id("acme/web"), "web");
        assert_eq!(pack_id("web"), "web");
    }

    #[test]
    fn aliases() {
        assert!(is_alias("main") && is_alias("a-b_9") && is_alias(&"x".repeat(64)));
        assert!(!is_alias("") && !is_alias("9a") && !is_alias("a.b") && !is_alias(&"x".repeat(65)));
    }
}
