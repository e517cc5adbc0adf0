//! cargo-fuzz target `substitution`: libFuzzer's bytes, as text, to the shared target body
//! (tests/fuzz_targets/mod.rs).
#![no_main]

#[path = "../../tests/common/mod.rs"]
mod common;
#[path = "../../tests/fuzz_targets/mod.rs"]
mod fuzz_targets;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_targets::substitution(&fuzz_targets::text(data)));
