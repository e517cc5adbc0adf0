#!/usr/bin/env bash
# Writes the cargo-fuzz seed corpora, fuzz/corpus/<target>/seed-NNNN (or under the folder given as
# $1), from the seeds defined once in tests/fuzz_targets/mod.rs: the prompts of spec-tests/ and
# examples/, placeholders, store paths and globs, JSON documents and model replies, and the
# provider fixtures (pkg-tests/fixtures/providers). Generated, not committed (fuzz/.gitignore);
# libFuzzer adds the inputs it finds to the same folders.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNVIL_FUZZ_CORPUS_DIR=$(realpath -m "${1:-fuzz/corpus}") \
  cargo test --quiet --test fuzz -- --ignored --exact write_seed_corpora
