//! Just enough of Lua 5.5's lexical grammar to find the tokens the reference check reads: names,
//! string literals (their values, escapes decoded) and punctuation, with comments and numbers
//! skipped. It reads only text the real Lua compiler has already accepted, so it has no errors
//! of its own to report: whatever it cannot make sense of, it steps over.

/// One token and the byte offset where it starts in the chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Token<'a> {
    pub kind: Kind<'a>,
    pub at: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind<'a> {
    Name(&'a str),
    /// A string literal's value (what Lua would hand a function), lossily UTF-8.
    Str(String),
    /// Punctuation; the two- and three-byte operators that hold `=`, `.` or `:` come whole
    /// (`==`, `~=`, `<=`, `>=`, `..`, `...`, `::`), so `=` alone is an assignment.
    Sym(&'a str),
    Number,
}

/// The tokens of `code`, in order.
pub fn tokens(code: &str) -> Vec<Token<'_>> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let at = i;
        match c {
            _ if c.is_ascii_whitespace() => i += 1,
            b'-' if b.get(i + 1) == Some(&b'-') => {
                i += 2;
                match long_bracket(b, i) {
                    Some((level, open)) => i = long_end(b, open, level).1,
                    None => i = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |n| i + n),
                }
            }
            b'[' if long_bracket(b, i).is_some() => {
                let (level, open) = long_bracket(b, i).unwrap_or((0, i));
                // A newline right after the opening bracket is not part of the string.
                let mut start = open;
                if b.get(start) == Some(&b'\r') || b.get(start) == Some(&b'\n') {
                    let pair = matches!((b.get(start), b.get(start + 1)), (Some(b'\r'), Some(b'\n')) | (Some(b'\n'), Some(b'\r')));
                    start += if pair { 2 } else { 1 };
                }
                let (content_end, next) = long_end(b, open, level);
                let text = b.get(start..content_end.max(start)).unwrap_or_default();
                out.push(Token { kind: Kind::Str(String::from_utf8_lossy(text).into_owned()), at });
                i = next;
            }
            b'"' | b'\'' => {
                let (value, next) = short_string(b, i);
                out.push(Token { kind: Kind::Str(String::from_utf8_lossy(&value).into_owned()), at });
                i = next;
            }
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                out.push(Token { kind: Kind::Name(&code[at..i]), at });
            }
            _ if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) => {
                i = number_end(b, i);
                out.push(Token { kind: Kind::Number, at });
            }
            _ => {
                let len = [b"...".as_slice(), b"==", b"~=", b"<=", b">=", b"..", b"::"]
                    .iter()
                    .find(|op| b[i..].starts_with(op))
                    .map_or(1, |op| op.len());
                // Non-ASCII bytes only occur inside strings and comments of accepted text;
                // stepping a whole character keeps slices on character boundaries.
                let len = if c.is_ascii() { len } else { code[i..].chars().next().map_or(1, char::len_utf8) };
                out.push(Token { kind: Kind::Sym(&code[i..i + len]), at });
                i += len;
            }
        }
    }
    out
}

/// At `[` `=`* `[`: the level (how many `=`) and the offset after the opening bracket.
fn long_bracket(b: &[u8], i: usize) -> Option<(usize, usize)> {
    if b.get(i) != Some(&b'[') {
        return None;
    }
    let level = b[i + 1..].iter().take_while(|&&c| c == b'=').count();
    (b.get(i + 1 + level) == Some(&b'[')).then_some((level, i + 2 + level))
}

/// The end of a long bracket's content from `from` and the offset after its closing bracket.
fn long_end(b: &[u8], from: usize, level: usize) -> (usize, usize) {
    let mut j = from;
    while j < b.len() {
        if b[j] == b']' && b[j + 1..].iter().take(level).all(|&c| c == b'=') && b.get(j + 1 + level) == Some(&b']') {
            return (j, j + 2 + level);
        }
        j += 1;
    }
    (b.len(), b.len())
}

/// A quoted string starting at `i`: its value and the offset after the closing quote.
fn short_string(b: &[u8], i: usize) -> (Vec<u8>, usize) {
    let quote = b[i];
    let mut value = Vec::new();
    let mut j = i + 1;
    while j < b.len() && b[j] != quote {
        if b[j] != b'\\' {
            value.push(b[j]);
            j += 1;
            continue;
        }
        j += 1;
        let Some(&e) = b.get(j) else { break };
        j += 1;
        match e {
            b'a' => value.push(7),
            b'b' => value.push(8),
            b'f' => value.push(12),
            b'n' => value.push(b'\n'),
            b'r' => value.push(b'\r'),
            b't' => value.push(b'\t'),
            b'v' => value.push(11),
            b'\n' | b'\r' => {
                value.push(b'\n');
                if matches!(b.get(j), Some(&n) if (n == b'\n' || n == b'\r') && n != e) {
                    j += 1;
                }
            }
            b'x' => {
                let hex = b.get(j..j + 2).and_then(|h| std::str::from_utf8(h).ok()).and_then(|h| u8::from_str_radix(h, 16).ok());
                value.push(hex.unwrap_or(0));
                j += 2;
            }
            b'z' => {
                while b.get(j).is_some_and(u8::is_ascii_whitespace) {
                    j += 1;
                }
            }
            b'u' => {
                // \u{XXX}: the code point in (Lua's extended) UTF-8.
                let close = b[j..].iter().position(|&c| c == b'}').map_or(b.len(), |n| j + n);
                let code = std::str::from_utf8(b.get(j + 1..close).unwrap_or_default()).ok().and_then(|h| u32::from_str_radix(h, 16).ok());
                let mut utf8 = [0u8; 4];
                match code.and_then(char::from_u32) {
                    Some(ch) => value.extend_from_slice(ch.encode_utf8(&mut utf8).as_bytes()),
                    // A surrogate or a code point past U+10FFFF: no Rust char; one replacement.
                    None => value.extend_from_slice("\u{fffd}".as_bytes()),
                }
                j = close + 1;
            }
            b'0'..=b'9' => {
                let mut n = u32::from(e - b'0');
                for _ in 0..2 {
                    match b.get(j) {
                        Some(&d) if d.is_ascii_digit() => {
                            n = n * 10 + u32::from(d - b'0');
                            j += 1;
                        }
                        _ => break,
                    }
                }
                value.push(u8::try_from(n).unwrap_or(u8::MAX));
            }
            other => value.push(other),
        }
    }
    (value, (j + 1).min(b.len()))
}

/// The end of a numeral at `i`: digits, letters and dots, and a sign right after an exponent
/// mark (`e`, or `p` in a hexadecimal numeral).
fn number_end(b: &[u8], mut i: usize) -> usize {
    let hex = b[i] == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X'));
    let exponent: &[u8] = if hex { b"pP" } else { b"eE" };
    while i < b.len() {
        if exponent.contains(&b[i]) && matches!(b.get(i + 1), Some(b'+' | b'-')) {
            i += 2;
        } else if b[i].is_ascii_alphanumeric() || b[i] == b'.' {
            i += 1;
        } else {
            break;
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(code: &str) -> Vec<Kind<'_>> {
        tokens(code).into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn strings_comments_and_numbers() {
        use Kind::*;
        assert_eq!(
            kinds("call 'a\\tb\\65\\x41\\u{e9}\\z   c' --[==[ call('x') ]==] -- call('y')\n[[\nlong]]"),
            vec![Name("call"), Str("a\tbAAéc".into()), Str("long".into())]
        );
        assert_eq!(kinds("x = 1e-5 .. 0x1p+4"), vec![Name("x"), Sym("="), Number, Sym(".."), Number]);
        assert_eq!(kinds("a==b ... ::l::"), vec![Name("a"), Sym("=="), Name("b"), Sym("..."), Sym("::"), Name("l"), Sym("::")]);
        assert_eq!(kinds("\"q\\\"\\\n\""), vec![Str("q\"\n".into())]);
        assert_eq!(tokens("  call").first().map(|t| t.at), Some(2));
    }
}
