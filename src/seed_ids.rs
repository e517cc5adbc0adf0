//! The run's ids derived from its seed: the untrusted envelope's nonce and `sys.execution`, so a
//! run with the same seed repeats them.

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
}
