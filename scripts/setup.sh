#!/usr/bin/env bash
# Installs whatever is missing to build Tandem (and, with --test, to test it). Idempotent:
# each step checks first, so a warm machine spends seconds. Only package registries are
# used (crates.io, npm, Debian apt): nothing is downloaded from GitHub or vendor sites.
set -euo pipefail
cd "$(dirname "$0")/.."

# --browser: also Chromium and the npm test packages (the benchmark's page figure);
# --test: those and everything the test command needs.
want_test=false
want_browser=false
case "${1:-}" in
  --test) want_test=true; want_browser=true ;;
  --browser) want_browser=true ;;
esac

TRUNK_VERSION=0.21.14
# The splitter of the page's WASM (scripts/build.sh); the version of the wasm_split_helpers
# crate the page uses (web/Cargo.toml).
WASM_SPLIT_VERSION=0.2.3
BINARYEN_VERSION=132.0.0
# The minifier of the page's JS (scripts/build.sh).
TERSER_VERSION=5.51.4
SCHEMATHESIS_VERSION=4.32.5
GRPCIO_VERSION=1.85.3
OTEL_PROTO_VERSION=1.45.2
CARGO_FUZZ_VERSION=0.13.2
NEXTEST_VERSION=0.9.143
# The Python interpreter of the run_python tool: RustPython built for WASI preview 1, its
# standard library frozen in (0.6 needs a newer rustc than this toolchain). `host_env` is
# what WASI gives it (files under a preopened folder, no environment, no sockets): without
# it a program cannot open a file at all.
RUSTPYTHON_VERSION=0.5.0
RUSTPYTHON_FEATURES=stdlib,stdio,importlib,freeze-stdlib,encodings,host_env
TOOLS_DIR="${TANDEM_TOOLS_DIR:-$HOME/.cache/tandem-tools}"
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

apt_install() {
  if ! command -v apt-get >/dev/null; then
    say "missing: $*; install them with your package manager"; exit 1
  fi
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [ ! -f /tmp/.tandem-apt-updated ]; then $sudo apt-get update -qq && touch /tmp/.tandem-apt-updated; fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# PostgreSQL for the tests of the team backend. A server already answering on
# 127.0.0.1:5432 as `postgres` (trust) is used as it is; otherwise Debian's server is
# installed and started if needed, and a `tandem` role (password `tandem`, allowed to
# create databases) is made. The URL the tests create their databases from is written to
# $TOOLS_DIR/postgres-url.
ensure_postgres() {
  local trusted="postgres://postgres@127.0.0.1:5432/postgres"
  local own="postgres://tandem:tandem@127.0.0.1:5432/postgres"
  mkdir -p "$TOOLS_DIR"
  command -v psql >/dev/null && command -v pg_dump >/dev/null || {
    say "installing PostgreSQL"; apt_install postgresql postgresql-client; }
  for url in "$trusted" "$own"; do
    if psql "$url" -qAtc 'SELECT 1' >/dev/null 2>&1; then
      echo "$url" >"$TOOLS_DIR/postgres-url"; return
    fi
  done
  if ! pg_isready -q -h 127.0.0.1 -p 5432; then
    command -v pg_ctlcluster >/dev/null || { say "installing PostgreSQL"; apt_install postgresql; }
    local version; version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -1)
    [ -n "$version" ] || { say "PostgreSQL is installed but has no cluster; create one with pg_createcluster"; exit 1; }
    say "starting PostgreSQL $version"
    as_postgres pg_ctlcluster "$version" main start
    for _ in $(seq 50); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.2; done
  fi
  say "creating the PostgreSQL role tandem"
  as_postgres psql -qAtc "DO \$\$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'tandem') THEN
        CREATE ROLE tandem LOGIN CREATEDB PASSWORD 'tandem';
      END IF; END \$\$;"
  psql "$own" -qAtc 'SELECT 1' >/dev/null || { say "cannot reach PostgreSQL at $own"; exit 1; }
  echo "$own" >"$TOOLS_DIR/postgres-url"
}

as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi
}

# Build artefacts live outside the checkout, in one cache every checkout on this machine
# shares (as CI systems cache target/): a fresh clone compiles Tandem's own crates, not
# its hundreds of dependencies again (the workspace's, the page's and the fuzz targets').
# A checkout that has a target/ of its own keeps it.
BUILD_CACHE="${TANDEM_BUILD_CACHE:-$HOME/.cache/tandem-target}"
if [ ! -e target ] && [ ! -L target ]; then
  mkdir -p "$BUILD_CACHE"
  ln -s "$BUILD_CACHE" target
fi

command -v cargo >/dev/null || { say "Rust is missing: install it with rustup (https://rustup.rs)"; exit 1; }
command -v npm >/dev/null || { say "installing Node.js and npm"; apt_install nodejs npm; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32 target"; rustup target add wasm32-unknown-unknown
fi
# WASI preview 1: the sandbox's test tools (tests/wasm-tools) are built for it.
if ! rustup target list --installed | grep -qx wasm32-wasip1; then
  say "adding the wasm32-wasip1 target"; rustup target add wasm32-wasip1
fi

if ! trunk --version 2>/dev/null | grep -q "$TRUNK_VERSION"; then
  say "installing Trunk $TRUNK_VERSION (about 10 minutes on 2 cores, once)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

# It has no --version: cargo's list of installed packages says which one is there.
if ! cargo install --list | grep -qx "wasm_split_cli_support v$WASM_SPLIT_VERSION:"; then
  say "installing wasm-split-cli $WASM_SPLIT_VERSION (about 5 minutes on 2 cores, once)"
  cargo install wasm_split_cli_support --version "$WASM_SPLIT_VERSION" --locked --features build-binary
fi

# The CLI must match the wasm-bindgen crate in Cargo.lock exactly. Not --locked: its own
# lockfile pins a crate version the registry mirror lacks.
bindgen_version=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/[^0-9.]/, ""); print; exit}' Cargo.lock)
if ! wasm-bindgen --version 2>/dev/null | grep -q "$bindgen_version"; then
  say "installing wasm-bindgen-cli $bindgen_version"
  cargo install wasm-bindgen-cli --version "$bindgen_version"
fi

# npm's binaryen, not Debian's: Debian's (108) emits WASM that fails in the browser.
if ! "$TOOLS_DIR/node_modules/.bin/wasm-opt" --version 2>/dev/null | grep -q "version ${BINARYEN_VERSION%%.*}"; then
  say "installing binaryen $BINARYEN_VERSION into $TOOLS_DIR"
  mkdir -p "$TOOLS_DIR"
  npm install --silent --no-audit --no-fund --prefix "$TOOLS_DIR" "binaryen@$BINARYEN_VERSION"
fi

if ! "$TOOLS_DIR/node_modules/.bin/terser" --version 2>/dev/null | grep -qx "terser $TERSER_VERSION"; then
  say "installing terser $TERSER_VERSION into $TOOLS_DIR"
  mkdir -p "$TOOLS_DIR"
  npm install --silent --no-audit --no-fund --prefix "$TOOLS_DIR" "terser@$TERSER_VERSION"
fi

# run_python's interpreter, built once into the tools cache: the server loads it with
# --python-wasm ($TOOLS_DIR/rustpython.wasm: scripts/run.sh and the tests pass it) and
# compiles it once into its module cache.
python_root="$TOOLS_DIR/rustpython-$RUSTPYTHON_VERSION-$(printf %s "$RUSTPYTHON_FEATURES" | cksum | cut -d' ' -f1)"
if [ ! -f "$python_root/bin/rustpython.wasm" ]; then
  say "building RustPython $RUSTPYTHON_VERSION for wasm32-wasip1 (about 10 minutes on 2 cores, once)"
  cargo install rustpython --version "$RUSTPYTHON_VERSION" --locked --target wasm32-wasip1 \
    --no-default-features --features "$RUSTPYTHON_FEATURES" \
    --root "$python_root"
fi
# The path scripts/run.sh and the tests use, whatever the version.
ln -sfn "$python_root/bin/rustpython.wasm" "$TOOLS_DIR/rustpython.wasm"

if $want_browser; then
  if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    say "installing Chromium and its driver"; apt_install chromium chromium-driver
  fi
  if [ ! -d tests/node_modules ] || [ tests/package-lock.json -nt tests/node_modules/.package-lock.json ]; then
    say "installing the test packages (npm ci)"
    (cd tests && npm ci --silent --no-audit --no-fund)
  fi
fi
if $want_test; then
  if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
    say "installing cargo-fuzz $CARGO_FUZZ_VERSION (about 2 minutes, once)"
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
  fi
  # The Rust tests' runner: any 0.9 already installed will do.
  if ! cargo nextest --version 2>/dev/null | grep -q "cargo-nextest 0\.9\."; then
    say "installing cargo-nextest $NEXTEST_VERSION (about 5 minutes, once)"
    cargo install cargo-nextest --version "$NEXTEST_VERSION" --locked
  fi
  ensure_postgres
  # Schemathesis (PyPI) in a venv of its own, pinned.
  if ! "$TOOLS_DIR/venv/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
    command -v python3 >/dev/null || { say "installing Python"; apt_install python3; }
    python3 -c 'import venv, ensurepip' 2>/dev/null || { say "installing python3-venv"; apt_install python3-venv; }
    say "installing schemathesis $SCHEMATHESIS_VERSION into $TOOLS_DIR/venv"
    python3 -m venv "$TOOLS_DIR/venv"
    "$TOOLS_DIR/venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
  fi
  # The OTLP/gRPC receiver of the trace tests (tests/support/otlp_grpc_receiver.py): gRPC's
  # own Python server and the OpenTelemetry protocol's generated messages, pinned.
  if ! "$TOOLS_DIR/venv/bin/python" -c "import grpc, opentelemetry.proto; assert grpc.__version__ == '$GRPCIO_VERSION'" 2>/dev/null; then
    say "installing grpcio $GRPCIO_VERSION and opentelemetry-proto $OTEL_PROTO_VERSION into $TOOLS_DIR/venv"
    "$TOOLS_DIR/venv/bin/pip" install --quiet --disable-pip-version-check \
      "grpcio==$GRPCIO_VERSION" "opentelemetry-proto==$OTEL_PROTO_VERSION"
  fi
fi
say "tools ready"
