#!/usr/bin/env bash
# Runvil build entry point. One job per subcommand; each first makes sure the tools are in place
# (`setup`, which skips what is done), never more:
#   setup       install what is missing: apt packages and rustup parts (once per machine, stamped in
#               .build/), wasm-bindgen-cli, npm dev dependencies; then the vendored crate copies
#               (tools/vendor.mjs, vendor/README.md)
#   build       (default) compile the engine to wasm, bind, optimise, write the npm package to pkg/
#   playground  build the playground from www/ into site/ (needs pkg/); --serve also serves it
#   lint        formatting, clippy (native and wasm32), cargo doc, doc links
#   test        every test against the tree and the pkg/ and site/ already built: native cargo test,
#               the Lua 5.5 test suite in the sandbox, node --test pkg-tests/ under Node 20 and 24
#   fuzz [SECONDS]  the cargo-fuzz (libFuzzer) targets in fuzz/, SECONDS each (default 20)
#   ci          what CI runs: build, playground, lint, test, fuzz
#   example     build, then run examples/hello.md through the CLI with a scripted (offline) model
#   bench       build, then every benchmark (node bench/run.mjs: results in bench/results/), then
#               regenerate docs/performance.md's tables (tools/perf-doc.mjs). Options: --quick (a smoke
#               run; the doc goes to bench/results/performance.quick.md), --no-build (against the
#               current pkg/), --no-browser, --no-native, --only suite,suite (see bench/README.md)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
ROOT=$PWD
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
PKG=$ROOT/pkg
APT_PACKAGES=(clang-19 llvm-19 wasi-libc lua5.4 chromium unzip)
WASM_GZIP_BUDGET=420000
# cargo-fuzz: pinned, installed when missing; every target in fuzz/ runs FUZZ_SECONDS in `ci`.
CARGO_FUZZ_VERSION=0.13.2
FUZZ_TARGETS=(parser substitution paths lua_json replies)
FUZZ_SECONDS=20

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

# The wasm-bindgen CLI must match the crate version exactly (the glue format is version-specific).
wasm_bindgen_crate_version() {
  awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock
}

# apt and rustup are asked once per machine: the stamp records what was installed, and a changed
# list (or a new checkout) asks again.
SYSTEM_STAMP=.build/system.stamp

system_wanted() {
  printf '%s\n' "${APT_PACKAGES[@]}" rustfmt clippy wasm32-unknown-unknown "wasm-bindgen $(wasm_bindgen_crate_version)"
}

setup_system() {
  [ "$(cat "$SYSTEM_STAMP" 2>/dev/null)" = "$(system_wanted)" ] && return
  setup_apt
  setup_rust
  mkdir -p .build
  system_wanted >"$SYSTEM_STAMP"
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

# Node 24, the current LTS, from the npm registry (tools/node24/package.json says why it has a
# folder of its own): the package tests run under it as well as under the machine's Node.
NODE24=tools/node24/node_modules/node24/bin/node

setup_node24() {
  [ -x "$NODE24" ] && [ tools/node24/node_modules/.package-lock.json -nt tools/node24/package-lock.json ] && return
  log "npm: installing Node 24 into tools/node24"
  npm ci --prefix tools/node24 --ignore-scripts --no-audit --no-fund
}

# The crates built from a changed copy (lua-src, pulldown-cmark, mlua): Cargo.toml's
# [patch.crates-io] points at .build/, and cargo refuses every command until the copies exist, so
# they are made before any other cargo call. tools/vendor.mjs holds the table of what each copy is
# made of and remakes a copy only when its inputs changed.
setup_vendor() {
  node tools/vendor.mjs prepare
}

setup_cargo_fuzz() {
  local have=''
  if cargo fuzz --version >/dev/null 2>&1; then have=$(cargo fuzz --version | awk '{print $2}'); fi
  [ "$have" = "$CARGO_FUZZ_VERSION" ] && return
  log "cargo: installing cargo-fuzz $CARGO_FUZZ_VERSION (had: ${have:-none})"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION"
}

cmd_setup() {
  setup_system
  setup_npm
  setup_node24
  setup_vendor
}

size_line() {
  printf '%-46s %9d bytes raw, %8d bytes gzip -9\n' "$1" "$(stat -c %s "$2")" "$(gzip -9c "$2" | wc -c)"
}

cmd_build() {
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
  size_line "raw cargo output (runvil.wasm)" "$raw"
  size_line "pkg/runvil_bg.wasm (bound + wasm-opt -Oz)" "$PKG/runvil_bg.wasm"
  # The size budget, 420,000 bytes gzip: the module is what every browser running a prompt
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
  log "prettier --check js/ (the package's JavaScript, .d.ts and jsconfig)"
  node_modules/.bin/prettier --check 'js/**/*.{js,ts,json}'
  log "tsc -p js/jsconfig.json (the package's JavaScript against its .d.ts files)"
  node_modules/.bin/tsc -p js/jsconfig.json
}

cmd_playground() {
  [ -f "$PKG/index.js" ] || die "playground: no pkg/ yet (run ./build.sh build)"
  log "node tools/build-site.mjs $* (the playground, into site/)"
  node tools/build-site.mjs "$@"
}

cmd_test() {
  [ -f "$PKG/runvil_bg.wasm" ] && [ -f site/index.html ] || die "test: build the package and the playground first (./build.sh build && ./build.sh playground)"
  local raw=$TARGET_DIR/wasm32-unknown-unknown/release/runvil.wasm
  [ "$raw" -nt "$PKG/runvil_bg.wasm" ] && log "warning: pkg/ is older than the last wasm compile: the package tests run the older build"
  log "cargo test (native)"
  cargo test
  log "cargo test --features lua-testes --test lua_testes (the Lua 5.5 test suite in the sandbox)"
  cargo test --features lua-testes --test lua_testes
  log "node --test pkg-tests/ (Node $(node --version))"
  node --test pkg-tests/
  log "node --test pkg-tests/ (Node $("$NODE24" --version))"
  # Node 22 and later take files or glob patterns, not a folder.
  "$NODE24" --test 'pkg-tests/*.test.mjs'
}

cmd_ci() {
  cmd_build
  cmd_playground
  cmd_lint
  cmd_test
  cmd_fuzz
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
  [ "$build" = 1 ] && cmd_build
  log "node bench/run.mjs ${args[*]}"
  node bench/run.mjs "${args[@]}"
}

cmd=${1:-build}
[ $# -gt 0 ] && shift
case "$cmd" in
  -h | --help | help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  setup | build | lint | test | example | bench | fuzz | playground | ci) ;;
  *) die "unknown subcommand '$cmd' (setup | build | playground | lint | test | fuzz | ci | example | bench)" ;;
esac
cmd_setup
case "$cmd" in
  setup) ;;
  build) cmd_build ;;
  playground) cmd_playground "$@" ;;
  lint) cmd_lint ;;
  test) cmd_test ;;
  fuzz) cmd_fuzz "${1:-}" ;;
  ci) cmd_ci ;;
  example) cmd_example ;;
  bench) cmd_bench "$@" ;;
esac
