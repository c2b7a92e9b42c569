#!/usr/bin/env bash
# Schemathesis against the real binary with authentication on: it reads the server's own
# /api/openapi.json, generates requests for every operation (coverage, fuzzing and
# stateful phases, with the bearer token of a user created for the run) and fails on any
# 5xx, any response that violates the document (status, content type, headers, body
# schema), an operation that ignores missing credentials, or a wrong answer to an
# undeclared method. `GET /api/sessions/stream` is left out: its body never ends (the list
# as it changes), so no response of it could be judged whole; tests/api/session_list.rs
# covers it. It does not judge how strict request validation is (the
# positive/negative data checks): bodies are limited in bytes, the schema in characters.
#
# Env: TANDEM_BIN (default target/debug/tandem), SCHEMATHESIS (default the tools venv),
# SCHEMATHESIS_EXAMPLES (default 40 per operation).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${TANDEM_BIN:-$PWD/target/debug/tandem}"
st="${SCHEMATHESIS:-${TANDEM_TOOLS_DIR:-$HOME/.cache/tandem-tools}/venv/bin/schemathesis}"
dir=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT

db="sqlite://$dir/tandem.db"
token=$("$bin" --database-url "$db" users add fuzzer | grep '^tdm_')
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" --bind "127.0.0.1:$port" --database-url "$db" --auth token --engine demo \
  --token-delay-ms 0 --web-dir /nonexistent --workspace-dir "$dir/workspace" \
  --sessions-per-minute 100000 --messages-per-minute 100000 --tool-uploads-per-minute 100000 \
  --wasm-cache-dir "$dir/wasm-cache" >"$dir/tandem.log" 2>&1 &
pid=$!

if ! "$st" run "http://127.0.0.1:$port/api/openapi.json" --wait-for-schema 30 \
  -H "Authorization: Bearer $token" \
  --exclude-path /api/sessions/stream \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,ignored_auth,unsupported_method,use_after_free,ensure_resource_availability \
  --max-examples "${SCHEMATHESIS_EXAMPLES:-40}" --no-color; then
  echo "--- tandem log (last 40 lines) ---"
  tail -40 "$dir/tandem.log"
  exit 1
fi
