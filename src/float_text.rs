//! Decimal text to `f64`, correctly rounded, through the C library's `strtod`.
//!
//! Why not `str::parse::<f64>`: the module already carries the C library's parser (Lua reads its
//! numbers with it), and Rust's is a second one, its code and its table of powers of five about
//! 14.7 KB of the gzipped module (docs/performance.md, "Size work"). Both round to the nearest
//! double (wasi-libc's is musl's; natively it is the platform's), so the value is the same; the
//! grammar is checked here first, so what is accepted is exactly what Rust's parser accepts
//! after refusing the non-finite.

use std::ffi::{c_char, c_double, CString};

extern "C" {
    fn strtod(text: *const c_char, end: *mut *mut c_char) -> c_double;
}

/// `text` as a finite `f64` when the whole of it is a decimal number: an optional sign, digits
/// with at most one `.` and at least one digit, an optional exponent (`e` or `E`, an optional
/// sign, digits). Anything else (spaces, hex, `inf`, `nan`, `_`) is `None`, and so is a value
/// too large for a double.
pub fn parse_finite(text: &str) -> Option<f64> {
    if !is_decimal(text.as_bytes()) {
        return None;
    }
    let c = CString::new(text).ok()?;
    let mut end: *mut c_char = std::ptr::null_mut();
    // SAFETY: `c` is NUL-terminated and outlives the call; strtod reads up to the NUL and stores
    // in `end` a pointer into `c`, which is only compared below.
    let value = unsafe { strtod(c.as_ptr(), &mut end) };
    let consumed = (end as usize).wrapping_sub(c.as_ptr() as usize);
    (consumed == text.len() && value.is_finite()).then_some(value)
}

fn is_decimal(s: &[u8]) -> bool {
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let s = s.strip_prefix(b"+").or_else(|| s.strip_prefix(b"-")).unwrap_or(s);
    let whole = digits(s);
    let mut rest = &s[whole..];
    let mut fraction = 0;
    if let Some(after) = rest.strip_prefix(b".") {
        fraction = digits(after);
        rest = &after[fraction..];
    }
    if whole + fraction == 0 {
        return false;
    }
    match rest.first() {
        None => true,
        Some(b'e' | b'E') => {
            let exponent = rest[1..].strip_prefix(b"+").or_else(|| rest[1..].strip_prefix(b"-")).unwrap_or(&rest[1..]);
            let n = digits(exponent);
            n > 0 && n == exponent.len()
        }
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rust(text: &str) -> Option<f64> {
        text.parse::<f64>().ok().filter(|f| f.is_finite())
    }

    #[test]
    fn accepts_what_rusts_parser_accepts_with_the_same_value() {
        let texts = [
            "0",
            "-0",
            "+0",
            "1.",
            ".5",
            "-.5",
            "+1e5",
            "1E-5",
            "1e+5",
            "00012.50",
            "-9.223372032337203e+85",
            "2.2250738585072014e-308",
            "2.225073858507201e-308",
            "4.9e-324",
            "2e-324",
            "1e-400",
            "1.7976931348623157e308",
            "1.7976931348623159e308",
            "1e309",
            "0.1",
            "123456789012345678901234567890",
            "9007199254740993",
            "",
            ".",
            "-",
            "+",
            "e5",
            "1e",
            "1e+",
            "1.5.2",
            "1..2",
            " 1",
            "1 ",
            "0x10",
            "inf",
            "-inf",
            "infinity",
            "nan",
            "NaN",
            "1_000",
            "1e5.5",
            "++1",
            "+-1",
            "1,5",
            "١",
        ];
        for text in texts {
            let ours = parse_finite(text);
            assert_eq!(ours.map(f64::to_bits), rust(text).map(f64::to_bits), "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn decimal_literals_read_as_rust_reads_them(
            sign in "[+-]?", whole in "[0-9]{0,25}", fraction in proptest::option::of("[0-9]{0,25}"), exponent in proptest::option::of("[eE][+-]?[0-9]{1,3}")
        ) {
            let text = format!("{sign}{whole}{}{}", fraction.map(|f| format!(".{f}")).unwrap_or_default(), exponent.unwrap_or_default());
            prop_assert_eq!(parse_finite(&text).map(f64::to_bits), rust(&text).map(f64::to_bits), "{:?}", text);
        }

        #[test]
        fn every_double_reads_back_from_its_shortest_text(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite());
            for text in [format!("{x}"), format!("{x:e}")] {
                prop_assert_eq!(parse_finite(&text).map(f64::to_bits), Some(bits), "{}", text);
            }
        }
    }
}
