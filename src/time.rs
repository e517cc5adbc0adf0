//! Run facts that come from the seed and the clock: the nonce, the execution id, RFC 3339 times.

/// splitmix64: a small, well-mixed step function; enough to spread a seed into independent
/// words (the seed itself comes from a secure source on the host side).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The run's nonce: 32 lowercase hex digits, a pure function of the seed.
pub fn nonce(seed: u64) -> String {
    let mut s = seed ^ 0x6E6F_6E63_6521_7275; // domain separation from execution_id
    format!("{:016x}{:016x}", splitmix64(&mut s), splitmix64(&mut s))
}

/// `sys.execution`: a run id derived from the seed, so a replay reports the same id.
pub fn execution_id(seed: u64) -> String {
    let mut s = seed ^ 0x6578_6563_7574_696F;
    format!("run-{:012x}", splitmix64(&mut s) >> 16)
}

/// `2026-11-29T20:31:01Z` for a time in milliseconds since the Unix epoch.
pub fn rfc3339(ms: f64) -> String {
    let secs = (ms / 1000.0).floor() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonce_is_32_hex_and_seeded() {
        let n = nonce(42);
        assert_eq!(n.len(), 32);
        assert!(n.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_eq!(n, nonce(42));
        assert_ne!(n, nonce(43));
    }

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_796_070_661_000.0), "2026-11-30T20:31:01Z");
        assert_eq!(rfc3339(951_782_400_000.0), "2000-02-29T00:00:00Z");
    }
}
