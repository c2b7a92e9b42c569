#!/usr/bin/env bash
# Builds the page (Trunk, release) into dist/ and the server binary.
# Usage: scripts/build.sh [release|debug|page]   (default release; `page` builds only dist/)
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-release}"
export PATH="${TANDEM_TOOLS_DIR:-$HOME/.cache/tandem-tools}/node_modules/.bin:$HOME/.cargo/bin:$PATH"

# Trunk builds offline (it passes --offline to cargo), so fetch crates first.
cargo fetch --quiet
trunk build --release --skip-version-check >/dev/null
case "$profile" in
  release) cargo build --release --bin tandem ;;
  debug) cargo build --bin tandem ;;
  page) ;;
  *) echo "usage: scripts/build.sh [release|debug|page]" >&2; exit 2 ;;
esac
