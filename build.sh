#!/usr/bin/env bash
# Runvil build entry point. Subcommands:
#   setup    install missing tools (apt, rustup target, wasm-bindgen-cli, npm dev deps), prepare .build/lua-src,
#            .build/pulldown-cmark and .build/mlua
#   build    (default) setup, compile the engine to wasm, bind, optimise, write the npm package to pkg/
#   lint     cargo fmt --check, clippy (native and wasm32, warnings denied), cargo doc (warnings denied)
#   test     build, lint, then native `cargo test`, then every package test (node --test pkg-tests/)
#   example  build, then run examples/hello.md through the CLI with a scripted (offline) model
#   bench    build, then every benchmark (node bench/run.mjs: results in bench/results/), then
#            regenerate docs/performance.md's tables (tools/perf-doc.mjs). Options: --quick (a smoke
#            run; the doc goes to bench/results/performance.quick.md), --no-build (against the
#            current pkg/), --no-browser, --no-native, --only suite,suite (see bench/README.md)
#   fuzz [SECONDS]  the cargo-fuzz (libFuzzer) targets in fuzz/, SECONDS each (default 20; in `test`)
#   playground  build, then serve the playground (site/) on 127.0.0.1 and print its URL
# Every step skips what is already in place, so re-running is cheap.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
ROOT=$PWD
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
PKG=$ROOT/pkg
APT_PACKAGES=(clang-19 llvm-19 wasi-libc lua5.4 chromium unzip)
WASM_GZIP_BUDGET=470000
# cargo-fuzz: pinned, installed when missing; every target in fuzz/ runs FUZZ_SECONDS in `test`.
CARGO_FUZZ_VERSION=0.13.2
FUZZ_TARGETS=(parser substitution paths lua_json replies)
FUZZ_SECONDS=20

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

# The wasm-bindgen CLI must match the crate version exactly (the glue format is version-specific).
wasm_bindgen_crate_version() {
  awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock
}

setup_apt() {
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  log "apt: installing ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
}

setup_rust() {
  local component
  for component in rustfmt clippy; do
    rustup component list --installed | grep -q "^$component" || {
      log "rustup: adding $component"
      rustup component add "$component"
    }
  done
  rustup target list --installed | grep -qx wasm32-unknown-unknown || {
    log "rustup: adding wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
  }
  local want have=''
  want=$(wasm_bindgen_crate_version)
  [ -n "$want" ] || die "no wasm-bindgen entry in Cargo.lock"
  if command -v wasm-bindgen >/dev/null; then have=$(wasm-bindgen --version | awk '{print $2}'); fi
  if [ "$have" != "$want" ]; then
    # No --locked: a crate pinned by wasm-bindgen-cli's lockfile is missing from the registry mirror.
    log "cargo: installing wasm-bindgen-cli $want (had: ${have:-none})"
    cargo install wasm-bindgen-cli --version "$want"
  fi
}

setup_npm() {
  # npm records the installed tree in node_modules/.package-lock.json; skip when it is newer than
  # the lockfile. --ignore-scripts: the deno/workerd binaries come from platform packages, and
  # their postinstall scripts would only try network fallbacks.
  if [ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ] \
     && [ node_modules/.package-lock.json -nt package.json ]; then
    return
  fi
  log "npm: installing dev dependencies"
  npm ci --ignore-scripts --no-audit --no-fund
}

# Cargo.toml patches lua-src to .build/lua-src: lua-src 551.1.0 (the first release that knows
# wasm32-unknown-unknown) relabelled 551.0.99 so mlua-sys's `<551.1.0` requirement accepts it.
# Cargo refuses every command until this folder exists, so it is prepared before any other cargo call.
# What the copy is made of beyond the registry source: the stubs and the patches (and the compiler
# wrapper, whose per-file flags cargo cannot see). A copy made from other inputs is made again, so
# cargo recompiles Lua.
lua_overlay_stamp() {
  cat wasm-support/lua-stubs/*.c wasm-support/lua-patches/*.patch wasm-support/lua-unity/*.c wasm-support/wasm-cc | sha256sum | cut -d' ' -f1
}

setup_lua_src() {
  local dest=.build/lua-src
  if grep -qx 'version = "551.0.99"' "$dest/Cargo.toml" 2>/dev/null \
     && [ "$(cat "$dest/.runvil-overlay" 2>/dev/null)" = "$(lua_overlay_stamp)" ]; then return; fi
  log "preparing $dest (lua-src 551.1.0 relabelled 551.0.99)"
  cargo fetch --manifest-path tools/crate-fetch/Cargo.toml
  local src
  src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/lua-src-551.1.0 2>/dev/null | head -n1)
  [ -n "$src" ] || die "lua-src-551.1.0 not found in the cargo registry after cargo fetch"
  rm -rf "$dest.tmp" && mkdir -p .build
  cp -R "$src" "$dest.tmp"
  chmod -R u+w "$dest.tmp"
  sed -i '0,/^version = "551.1.0"$/s//version = "551.0.99"/' "$dest.tmp/Cargo.toml"
  grep -qx 'version = "551.0.99"' "$dest.tmp/Cargo.toml" || die "could not relabel lua-src version"
  # The io, os, debug and package libraries never enter the sandbox; their sources
  # are replaced by stubs (wasm-support/lua-stubs) so the module does not carry them.
  cp wasm-support/lua-stubs/*.c "$dest.tmp/lua-5.5.1/"
  # Small documented changes to the VM itself (wasm-support/lua-patches/README.md), each applied
  # exactly or the build stops.
  local patch
  for patch in wasm-support/lua-patches/*.patch; do
    patch -s -p1 --no-backup-if-mismatch -d "$dest.tmp" <"$patch" || die "could not apply $patch"
  done
  # The VM's hot core as one translation unit (wasm-support/lua-unity/lcore.c says why): the files
  # it includes move to core/, out of the folder lua-src compiles file by file.
  mkdir "$dest.tmp/lua-5.5.1/core"
  local unit
  for unit in $(sed -n 's/^#include "core\/\(.*\.c\)"$/\1/p' wasm-support/lua-unity/lcore.c); do
    mv "$dest.tmp/lua-5.5.1/$unit" "$dest.tmp/lua-5.5.1/core/$unit" || die "lcore.c includes $unit, which Lua does not have"
  done
  cp wasm-support/lua-unity/lcore.c "$dest.tmp/lua-5.5.1/"
  lua_overlay_stamp >"$dest.tmp/.runvil-overlay"
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
}

# Cargo.toml also patches pulldown-cmark to .build/pulldown-cmark: the registry source with its
# table of HTML named character references (src/entities.rs) replaced by a stub, because the
# engine never reads the text it decodes and the table is about 21 KB of the gzipped module
# (wasm-support/cmark-stubs/entities.rs says why it is safe). Keep the version equal to the one in
# Cargo.lock and tools/crate-fetch/Cargo.toml.
CMARK_VERSION=0.13.6

cmark_overlay_stamp() {
  { echo "$CMARK_VERSION"; cat wasm-support/cmark-stubs/*.rs; } | sha256sum | cut -d' ' -f1
}

setup_cmark_src() {
  local dest=.build/pulldown-cmark
  [ "$(cat "$dest/.runvil-overlay" 2>/dev/null)" = "$(cmark_overlay_stamp)" ] && return
  log "preparing $dest (pulldown-cmark $CMARK_VERSION without its entity table)"
  cargo fetch --manifest-path tools/crate-fetch/Cargo.toml
  local src
  src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/pulldown-cmark-$CMARK_VERSION 2>/dev/null | head -n1)
  [ -n "$src" ] || die "pulldown-cmark-$CMARK_VERSION not found in the cargo registry after cargo fetch"
  rm -rf "$dest.tmp" && mkdir -p .build
  cp -R "$src" "$dest.tmp"
  chmod -R u+w "$dest.tmp"
  [ -f "$dest.tmp/src/entities.rs" ] || die "pulldown-cmark $CMARK_VERSION has no src/entities.rs to replace"
  cp wasm-support/cmark-stubs/entities.rs "$dest.tmp/src/entities.rs"
  cmark_overlay_stamp >"$dest.tmp/.runvil-overlay"
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
}

# Cargo.toml patches mlua to .build/mlua: the registry source with small documented changes that
# make a Lua state cheaper to create (wasm-support/mlua-patches/README.md), each applied exactly or
# the build stops. Keep the version equal to the one in Cargo.lock and tools/crate-fetch/Cargo.toml.
# A copy made from other patches is made again, so cargo recompiles mlua.
MLUA_VERSION=0.12.2

mlua_overlay_stamp() {
  { echo "$MLUA_VERSION"; cat wasm-support/mlua-patches/*.patch; } | sha256sum | cut -d' ' -f1
}

setup_mlua_src() {
  local dest=.build/mlua
  [ "$(cat "$dest/.runvil-overlay" 2>/dev/null)" = "$(mlua_overlay_stamp)" ] && return
  log "preparing $dest (mlua $MLUA_VERSION with wasm-support/mlua-patches)"
  cargo fetch --manifest-path tools/crate-fetch/Cargo.toml
  local src
  src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/mlua-$MLUA_VERSION 2>/dev/null | head -n1)
  [ -n "$src" ] || die "mlua-$MLUA_VERSION not found in the cargo registry after cargo fetch"
  rm -rf "$dest.tmp" && mkdir -p .build
  cp -R "$src" "$dest.tmp"
  chmod -R u+w "$dest.tmp"
  local patch
  for patch in wasm-support/mlua-patches/*.patch; do
    patch -s -p1 --no-backup-if-mismatch -d "$dest.tmp" <"$patch" || die "could not apply $patch"
  done
  mlua_overlay_stamp >"$dest.tmp/.runvil-overlay"
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
}

setup_cargo_fuzz() {
  local have=''
  if cargo fuzz --version >/dev/null 2>&1; then have=$(cargo fuzz --version | awk '{print $2}'); fi
  [ "$have" = "$CARGO_FUZZ_VERSION" ] && return
  log "cargo: installing cargo-fuzz $CARGO_FUZZ_VERSION (had: ${have:-none})"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION"
}

cmd_setup() {
  setup_apt
  setup_rust
  setup_npm
  setup_lua_src
  setup_cmark_src
  setup_mlua_src
}

size_line() {
  printf '%-46s %9d bytes raw, %8d bytes gzip -9\n' "$1" "$(stat -c %s "$2")" "$(gzip -9c "$2" | wc -c)"
}

cmd_build() {
  cmd_setup
  log "cargo build --release --target wasm32-unknown-unknown"
  cargo build --release --target wasm32-unknown-unknown
  local raw=$TARGET_DIR/wasm32-unknown-unknown/release/runvil.wasm
  [ -f "$raw" ] || die "missing $raw"
  node tools/check-imports.mjs "$raw"

  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  wasm-bindgen --target web --out-dir "$tmp" --out-name runvil "$raw"
  # Legacy exception handling (try/catch) passes through wasm-opt unchanged; features are read
  # from the module's target_features section. --gufa (whole-program flow analysis) between two
  # -Oz passes, repeated until nothing changes (--converge), trims about 1 KB, which the size
  # budget currently needs. --low-memory-unused (about 2 KB more) lets binaryen fold constant
  # offsets into loads and stores: valid because rustc links the stack first (below the data), so
  # the lowest 1 KB is the far end of the 8 MiB stack and no object ever lives there.
  # --one-caller-inline-max-function-size=20: binaryen otherwise inlines every function that has
  # one caller, whatever its size, which merged most of the engine into a few huge functions
  # (the promise behind runPrompt was 72 KB of code). V8 compiles a wasm function whole on its
  # first call, so an engine's first run compiled all of that to use a part; capping it cut the
  # code a first run compiles by a fifth (337 to 266 KB) and, unexpectedly, the module by 14 KB
  # gzip (docs/performance.md, "Start-up").
  node_modules/.bin/wasm-opt --low-memory-unused --one-caller-inline-max-function-size=20 -Oz --gufa -Oz --converge --strip-debug --strip-producers "$tmp/runvil_bg.wasm" -o "$tmp/runvil_bg.opt.wasm"
  mv "$tmp/runvil_bg.opt.wasm" "$tmp/runvil_bg.wasm"
  node tools/make-package.mjs "$tmp" "$PKG"
  log "node tools/build-site.mjs (the playground, into site/)"
  node tools/build-site.mjs
  size_line "raw cargo output (runvil.wasm)" "$raw"
  size_line "pkg/runvil_bg.wasm (bound + wasm-opt -Oz)" "$PKG/runvil_bg.wasm"
  # The size budget, 470,000 bytes gzip: the module is what every browser running a prompt
  # downloads, so a feature makes room for itself within it (docs/performance.md, "Size work").
  local gz
  gz=$(gzip -9c "$PKG/runvil_bg.wasm" | wc -c)
  [ "$gz" -le "$WASM_GZIP_BUDGET" ] || die "pkg/runvil_bg.wasm is $gz bytes gzip -9, over the budget of $WASM_GZIP_BUDGET"
}

# The habits CI enforces: formatted code, no clippy warning for either target, docs without
# broken links. The wasm32 clippy pass matters: `src/wasm/` is compiled for that target only.
cmd_lint() {
  log "node tools/check-links.mjs (doc links and repository paths resolve)"
  node tools/check-links.mjs
  log "cargo fmt --check"
  cargo fmt --check
  log "cargo clippy (native, all targets)"
  cargo clippy --all-targets -- -D warnings
  log "cargo clippy (wasm32)"
  cargo clippy --release --target wasm32-unknown-unknown --lib -- -D warnings
  log "cargo doc"
  RUSTDOCFLAGS="-D warnings" cargo doc --no-deps
}

cmd_test() {
  cmd_build
  cmd_lint
  log "cargo test (native)"
  cargo test
  cmd_fuzz
  log "cargo test --features lua-testes --test lua_testes (the Lua 5.5 test suite in the sandbox)"
  cargo test --features lua-testes --test lua_testes
  log "node --test pkg-tests/"
  node --test pkg-tests/
}

# libFuzzer through cargo-fuzz on the stable toolchain: `--sanitizer none` makes cargo-fuzz pass
# only stable rustc flags (coverage instrumentation through -Cpasses/-Cllvm-args; AddressSanitizer
# would need -Zsanitizer, nightly or RUSTC_BOOTSTRAP). Each target starts from the seed corpora
# (fuzz/seed-corpora.sh) plus whatever earlier runs added, and runs SECONDS; a crash, a panic or an
# input slower than its -timeout fails the step and leaves the input in fuzz/artifacts/<target>/.
# The paths target gets 1 s per input (its inputs are at most 8 KB: anything near that is work
# growing faster than the input); the others 10 s, a hang bound.
cmd_fuzz() {
  local seconds=${1:-$FUZZ_SECONDS} t
  [[ "$seconds" =~ ^[0-9]+$ ]] || die "fuzz: SECONDS must be a whole number, got '$seconds'"
  setup_apt
  setup_lua_src
  setup_cmark_src
  setup_mlua_src
  setup_cargo_fuzz
  log "fuzz/seed-corpora.sh (seed corpora from spec-tests/, examples/, pkg-tests/fixtures/providers)"
  fuzz/seed-corpora.sh
  log "cargo fuzz build --sanitizer none (stable)"
  cargo fuzz build --sanitizer none
  for t in "${FUZZ_TARGETS[@]}"; do
    local limits=(-timeout=10)
    [ "$t" = paths ] && limits=(-timeout=1 -max_len=8192)
    log "cargo fuzz run $t (${seconds} s)"
    cargo fuzz run --sanitizer none "$t" -- -max_total_time="$seconds" "${limits[@]}" -print_final_stats=1 2>"fuzz/$t.log" \
      || { tail -n 40 "fuzz/$t.log" >&2; die "fuzz target $t failed: the input is in fuzz/artifacts/$t/ (fuzz/$t.log)"; }
    printf 'fuzz %-13s %s executions, %s inputs in the corpus\n' "$t" \
      "$(awk '/stat::number_of_executed_units/ {print $2}' "fuzz/$t.log")" \
      "$(ls "fuzz/corpus/$t" | wc -l)"
  done
}

cmd_example() {
  cmd_build
  log "runvil run examples/hello.md --args rivers --model-script examples/hello.replies.json"
  node pkg/cli.js run examples/hello.md --args rivers --model-script examples/hello.replies.json
}

cmd_bench() {
  local args=() a build=1
  for a in "$@"; do
    if [ "$a" = --no-build ]; then build=0; else args+=("$a"); fi
  done
  if [ "$build" = 1 ]; then cmd_build; else cmd_setup; fi
  log "node bench/run.mjs ${args[*]}"
  node bench/run.mjs "${args[@]}"
}

case "${1:-build}" in
  setup) cmd_setup ;;
  lint) cmd_setup && cmd_lint ;;
  build) cmd_build ;;
  test) cmd_test ;;
  example) cmd_example ;;
  bench) shift; cmd_bench "$@" ;;
  fuzz) cmd_fuzz "${2:-}" ;;
  playground) cmd_build && node tools/build-site.mjs --serve ;;
  -h | --help | help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) die "unknown subcommand '$1' (setup | build | lint | test | example | bench | fuzz | playground)" ;;
esac
