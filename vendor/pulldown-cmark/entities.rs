// Runvil's replacement for pulldown-cmark's `src/entities.rs` (tools/vendor.mjs copies
// it over the registry source in .build/pulldown-cmark). The original is a table of the 2,125
// HTML5 named character references (`&amp;`, `&nbsp;`, ...), about 50 KB of data and 21 KB of the
// gzipped module, that pulldown-cmark uses to decode inline text. Runvil reads no decoded text:
// prose, headings and list items are sliced from the source, and a Lua fence's code is literal
// (CommonMark decodes no references inside code blocks). The one decoded string the engine reads is
// a fence's info string, so with this stub a named reference there stays as written: ```` ```lua ````
// must be spelled in plain text, which is how every prompt writes it (numeric references such as
// `&#32;` and backslash escapes are still decoded; they do not use this table).
// docs/performance.md ("Size work") has the measurement.

/// No named character reference is known, so `&name;` stays literal text.
pub(crate) fn get_entity(_bytes: &[u8]) -> Option<&'static str> {
    None
}
