#!/usr/bin/env bash
# One command: install what is missing (Chromium, PostgreSQL, the npm test packages,
# cargo-fuzz and schemathesis too), then run every check: formatting, clippy, Rust unit
# and integration tests (the integration suite on SQLite, then again on PostgreSQL), the
# web crate's tests, the benchmark's smoke run, the fuzz targets' smoke run, schemathesis
# against the live API, the AG-UI conformance suite (real @ag-ui packages) and the
# browser story (Chromium), these two also on both backends.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
export PATH="${TANDEM_TOOLS_DIR:-$HOME/.cache/tandem-tools}/node_modules/.bin:$HOME/.cargo/bin:$PATH"

# Every test runs under a time limit: a Rust test is killed after two minutes
# (.config/nextest.toml), a node test after two minutes (--test-timeout), each named.

# Each step says how long the one before it took, and the end how long it all took.
started=$SECONDS
last=""
step() {
  [ -z "$last" ] || printf '\033[2m(%s s)\033[0m\n' "$((SECONDS - last))"
  last=$SECONDS
  printf '\n\033[1m== %s\033[0m\n' "$*"
}

step "format"
cargo fmt --all -- --check
cargo fmt --manifest-path fuzz/Cargo.toml -- --check
step "clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
step "build the page"
scripts/build.sh page
# One build of every binary and test with one feature set (dev-dependencies included), so
# the test run, the binary the later checks start and the benchmark share every artefact;
# `cargo build --bin tandem` alone would resolve features differently and rebuild the graph.
step "build the binaries and the tests"
cargo build --workspace --bins --tests
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
# features differently and rebuild the whole graph (~4 minutes on two cores).
TANDEM_TEST_BACKEND=postgres cargo nextest run --workspace --test api
step "benchmark smoke run (frames correct; figures not judged)"
# Each figure says its name when it starts, and the page's paint fails after a minute
# without it; a whole smoke run takes well under a minute, so one that runs ten has hung
# (in the figure named last) and is killed with its children.
timeout --verbose --kill-after=10 600 target/debug/tandem-bench --smoke
step "fuzz smoke: every parser of outside input, a few thousand inputs each"
fuzz/smoke.sh
step "schemathesis against the live API (auth on)"
# Under a minute as a rule; ten means a hang, killed with the server it started.
TANDEM_BIN="$PWD/target/debug/tandem" timeout --verbose --kill-after=10 600 tests/schemathesis/run.sh
step "AG-UI conformance and browser tests"
TANDEM_BIN="$PWD/target/debug/tandem" TANDEM_WEB_DIR="$PWD/dist" \
  node --test --test-concurrency=1 --test-timeout=120000 tests/conformance tests/browser
step "AG-UI conformance and browser tests again, on PostgreSQL"
TANDEM_TEST_BACKEND=postgres TANDEM_BIN="$PWD/target/debug/tandem" TANDEM_WEB_DIR="$PWD/dist" \
  node --test --test-concurrency=1 --test-timeout=120000 tests/conformance tests/browser
step "done in $((SECONDS - started)) s"
