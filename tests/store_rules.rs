//! Property tests of the store's path and glob rules (`004`): random paths against the rules'
//! stated consequences, random patterns against a naive reference matcher.
use proptest::prelude::*;
use runvil::store::path::{check_path, parse_pattern, Rule};

/// Paths built from the characters that matter to the rules.
fn path_strategy() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("a".to_string()),
        Just("b.txt".to_string()),
        Just("/".to_string()),
        Just(".".to_string()),
        Just("..".to_string()),
        Just(" ".to_string()),
        Just("\\".to_string()),
        Just("\t".to_string()),
        Just("con".to_string()),
        Just("Lpt3".to_string()),
        Just("é".to_string()),
    ];
    prop::collection::vec(piece, 0..8).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn valid_paths_have_the_stated_shape(path in path_strategy()) {
        match check_path(&path) {
            Ok(()) => {
                prop_assert!(!path.is_empty() && path.len() <= 1024);
                prop_assert!(!path.starts_with('/'));
                prop_assert!(!path.contains('\\') && !path.chars().any(|c| (c as u32) < 0x20 || c as u32 == 0x7f));
                for seg in path.split('/') {
                    prop_assert!(!seg.is_empty() && seg != "." && seg != "..");
                    prop_assert!(!seg.ends_with('.') && !seg.ends_with(' '));
                    let base = seg.split('.').next().unwrap().to_ascii_uppercase();
                    prop_assert!(!["CON", "PRN", "AUX", "NUL"].contains(&base.as_str()));
                    prop_assert!(!(base.len() == 4 && (base.starts_with("COM") || base.starts_with("LPT")) && base.as_bytes()[3].is_ascii_digit() && base.as_bytes()[3] != b'0'));
                }
            }
            Err(rule) => {
                // Whole-path rules come first, in their order.
                if path.starts_with('/') && !path.is_empty() && path.len() <= 1024 {
                    prop_assert_eq!(rule, Rule::Absolute);
                }
                if path.contains("//") && !path.starts_with('/') && !path.contains('\\') && !path.contains('\t') {
                    let first_bad = path.split('/').position(|s| s.is_empty() || s == "." || s == ".." || s.ends_with('.') || s.ends_with(' ') || {
                        let b = s.split('.').next().unwrap().to_ascii_uppercase();
                        b == "CON" || b == "LPT3"
                    });
                    prop_assert!(first_bad.is_some());
                }
            }
        }
    }

    #[test]
    fn glob_agrees_with_a_naive_matcher(
        pattern in prop::collection::vec(prop_oneof![Just("a"), Just("b"), Just("*"), Just("?"), Just("**"), Just("/")], 1..7),
        path in prop::collection::vec(prop_oneof![Just("a"), Just("b"), Just("ab"), Just("/")], 1..7),
    ) {
        let pattern = pattern.concat();
        let path = path.concat();
        if let Ok(p) = parse_pattern(&pattern) {
            if check_path(&path).is_ok() && !p.dirs {
                prop_assert_eq!(p.matches(&path), naive(&pattern, &path), "{} ~ {}", pattern, path);
            }
        }
    }
}

/// Reference: exponential backtracking over whole segments, fine for tiny inputs.
fn naive(pattern: &str, path: &str) -> bool {
    fn segs(ps: &[&str], ts: &[&str]) -> bool {
        match ps.split_first() {
            None => ts.is_empty(),
            Some((&"**", rest)) => (0..=ts.len()).any(|k| segs(rest, &ts[k..])),
            Some((p, rest)) => !ts.is_empty() && seg(p.as_bytes(), ts[0].as_bytes()) && segs(rest, &ts[1..]),
        }
    }
    fn seg(p: &[u8], t: &[u8]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some((b'*', rest)) => (0..=t.len()).any(|k| seg(rest, &t[k..])),
            Some((c, rest)) => t.first() == Some(c) && seg(rest, &t[1..]),
        }
    }
    let ps: Vec<&str> = pattern.split('/').collect();
    let ts: Vec<&str> = path.split('/').collect();
    segs(&ps, &ts)
}
