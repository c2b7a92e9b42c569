#!/usr/bin/env bash
# One command: install what is missing (Chromium, PostgreSQL, the npm test packages,
# cargo-fuzz and schemathesis too), then run every check: formatting, clippy, Rust unit
# and integration tests (the integration suite on SQLite, then again on PostgreSQL), the
# web crate's tests, the benchmark's smoke run, the fuzz targets' smoke run, schemathesis
# against the live API, the AG-UI conformance suite (real @ag-ui packages) and the
# browser story (Chromium), these two also on PostgreSQL (the browser's stories that
# depend on the backend).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
export PATH="${TANDEM_TOOLS_DIR:-$HOME/.cache/tandem-tools}/node_modules/.bin:$HOME/.cargo/bin:$PATH"

# Every test runs under a time limit: a Rust test is killed after two minutes
# (.config/nextest.toml), a node test after two minutes (--test-timeout), each named.

# Each step says how long the one before it took, and the end how long each and all took
# (docs/benchmarks.md keeps a run's figures, "The test command's time").
started=$SECONDS
last=""
names=()
times=()
step() {
  if [ -n "$last" ]; then
    printf '\033[2m(%s s)\033[0m\n' "$((SECONDS - last))"
    times+=("$((SECONDS - last))")
  fi
  last=$SECONDS
  names+=("$*")
  printf '\n\033[1m== %s\033[0m\n' "$*"
}
summary() {
  times+=("$((SECONDS - last))")
  printf '\n\033[1m== each step\033[0m\n'
  for i in "${!names[@]}"; do printf '%6s s  %s\n' "${times[$i]}" "${names[$i]}"; done
  printf '%6s s  all, on %s cores (%s)\n' "$((SECONDS - started))" "$(nproc)" \
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
}

step "format"
cargo fmt --all -- --check
cargo fmt --manifest-path fuzz/Cargo.toml -- --check
step "import circles (none of more than three files)"
python3 scripts/import_circles.py --max 3 server/src
step "build the page"
scripts/build.sh page
# Clippy and the build are one pass: clippy-driver (what `cargo clippy` runs) compiles the
# workspace's crates for real as it lints them, so every dependency is compiled once
# instead of checked once for clippy and built again. Every cargo command that builds the
# workspace below keeps these two variables, or it would build the workspace's crates
# again (the page's and the fuzz targets' builds are their own and run without them).
# One build of every target with one feature set (dev-dependencies included), so the test
# run, the binary the later checks start and the benchmark share every artefact.
step "clippy (-D warnings) and the build of every binary and test"
export RUSTC_WORKSPACE_WRAPPER=clippy-driver CLIPPY_ARGS=-Dwarnings
cargo build --workspace --all-targets
# The sandbox's test tools, as the WASI module the tests load (tests/api/sandbox.rs).
cargo build --release --target wasm32-wasip1 -p tandem-wasm-tools
step "Rust tests (the integration suite on SQLite)"
# Each test of the PostgreSQL store gets a scratch database named after this run; whatever
# a killed test leaves behind is dropped at the end.
export TANDEM_TEST_POSTGRES; TANDEM_TEST_POSTGRES=$(cat "${TANDEM_TOOLS_DIR:-$HOME/.cache/tandem-tools}/postgres-url")
export TANDEM_SCRATCH_PREFIX="tandem_run_$$"
drop_scratch() {
  psql "$TANDEM_TEST_POSTGRES" -qAt -c "SELECT datname FROM pg_database WHERE datname LIKE '${TANDEM_SCRATCH_PREFIX}_%'" 2>/dev/null |
    while read -r db; do psql "$TANDEM_TEST_POSTGRES" -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)"; done
}
trap drop_scratch EXIT
# cargo-nextest (.config/nextest.toml): a test that hangs is killed after two minutes and
# fails with its name; no retries.
cargo nextest run --workspace --no-tests=warn
step "the integration suite again, on PostgreSQL"
# `--workspace` keeps the feature set of the run above: `-p tandem` alone would resolve
# features differently and rebuild the whole graph (~4 minutes on two cores). Only what
# depends on the backend runs again: not the providers' wire formats and fallbacks, MCP,
# the edge's headers, slow bodies, the log lines' shape or names' characters, or run_python
# (the interpreter's behaviour), which read or write the store like any test but test
# nothing of it.
TANDEM_TEST_BACKEND=postgres cargo nextest run --workspace --test api -E "$(cat <<'FILTER'
not (test(/^openai::/) | test(/^anthropic::/) | test(/^fallback::/) | test(/^mcp::/)
  | test(/^access::edge::/) | test(/^limits::slow_bodies::/) | test(/^logs::/)
  | test(/^names::/) | test(/^run_python::/))
FILTER
)"
step "benchmark smoke run (frames correct; figures not judged)"
# Each figure says its name when it starts, and the page's paint fails after a minute
# without it; a whole smoke run takes well under a minute, so one that runs ten has hung
# (in the figure named last) and is killed with its children.
timeout --verbose --kill-after=10 600 target/debug/tandem-bench --smoke
step "fuzz smoke: every parser of outside input, a few thousand inputs each"
env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS fuzz/smoke.sh
step "schemathesis against the live API (auth on)"
# Under a minute as a rule; ten means a hang, killed with the server it started.
TANDEM_BIN="$PWD/target/debug/tandem" timeout --verbose --kill-after=10 600 tests/schemathesis/run.sh
step "AG-UI conformance and browser tests"
TANDEM_BIN="$PWD/target/debug/tandem" TANDEM_WEB_DIR="$PWD/dist" \
  node --test --test-concurrency=1 --test-timeout=120000 tests/conformance tests/browser
step "AG-UI conformance and the browser's backend-bound stories again, on PostgreSQL"
# The page's own behaviour does not depend on the backend; what the page sees of it does:
# the live session list (the change feed), signing out and revoking (credentials' endings),
# and share links. Those stories, and the AG-UI conformance suite, run again.
TANDEM_TEST_BACKEND=postgres TANDEM_BIN="$PWD/target/debug/tandem" TANDEM_WEB_DIR="$PWD/dist" \
  node --test --test-concurrency=1 --test-timeout=120000 tests/conformance \
  tests/browser/list.test.mjs tests/browser/sign_in.test.mjs tests/browser/routes.test.mjs
summary
