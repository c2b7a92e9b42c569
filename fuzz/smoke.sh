#!/usr/bin/env bash
# Builds every cargo-fuzz target and runs each for a short fixed number of inputs from its
# seeds (fuzz/seeds/<target>/, plus the recorded provider streams for the stream targets),
# failing on any crash. The corpus grows in a temporary folder, so the tree stays clean.
#
#   fuzz/smoke.sh                 # FUZZ_RUNS=3000 inputs per target (the test command)
#   FUZZ_SECONDS=1800 fuzz/smoke.sh openai_stream   # a long run of one target by hand
#
# cargo-fuzz needs nightly-only flags; RUSTC_BOOTSTRAP lets the stable toolchain take them.
# The smoke run is a dev build (overflow checks on) without a sanitizer: the targets are
# safe Rust, so a crash is a panic, which libFuzzer reports anyway. A long run by hand:
#   FUZZ_PROFILE=release FUZZ_SANITIZER=address FUZZ_SECONDS=1800 fuzz/smoke.sh
set -euo pipefail
cd "$(dirname "$0")"
export RUSTC_BOOTSTRAP=1
sanitizer="${FUZZ_SANITIZER:-none}"
profile="${FUZZ_PROFILE:-dev}"
flags=(-s "$sanitizer" --target-dir "../target/fuzz-$profile-$sanitizer")
if [ "$profile" = dev ]; then flags+=(--dev); else flags+=(--debug-assertions); fi
targets=("$@")
if [ ${#targets[@]} -eq 1 ]; then
  cargo fuzz build "${flags[@]}" "${targets[0]}"
else
  cargo fuzz build "${flags[@]}"
fi
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo fuzz list)

for target in "${targets[@]}"; do
  corpus=$(mktemp -d)
  seeds=("seeds/$target")
  case "$target" in
    openai_stream) seeds=(../tests/fixtures/openai) ;;
    anthropic_stream) seeds=(../tests/fixtures/anthropic) ;;
  esac
  if [ -n "${FUZZ_SECONDS:-}" ]; then
    limit=(-max_total_time="$FUZZ_SECONDS")
  else
    limit=(-runs="${FUZZ_RUNS:-3000}")
  fi
  printf '\033[1m[fuzz]\033[0m %s ' "$target"
  if ! cargo fuzz run "${flags[@]}" "$target" "$corpus" "${seeds[@]}" \
      -- "${limit[@]}" -max_len=65536 -timeout=10 -print_final_stats=1 >"$corpus.log" 2>&1; then
    echo "FAILED"; tail -40 "$corpus.log"; exit 1
  fi
  grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$corpus.log" | tr '\n' ' '
  echo "corpus: $(ls "$corpus" | wc -l) files"
  rm -rf "$corpus" "$corpus.log"
done
