#!/usr/bin/env bash
# One command: install what is missing, build the page and the server, run Tandem on its
# embedded default (SQLite under ./data, the demo model, run_python, the page at
# http://127.0.0.1:8080).
# Extra arguments go to `tandem` (see `tandem --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release
# run_python's interpreter, which scripts/setup.sh built (docs/tools.md).
export TANDEM_PYTHON_WASM="${TANDEM_PYTHON_WASM:-${TANDEM_TOOLS_DIR:-$HOME/.cache/tandem-tools}/rustpython.wasm}"
exec target/release/tandem --web-dir dist "$@"
