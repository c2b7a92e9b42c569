#!/usr/bin/env bash
# Builds the page into dist/ and the server binary.
# Usage: scripts/build.sh [release|debug|page]   (default release; `page` builds only dist/)
#
# The page is two builds in one folder. Trunk writes the HTML and the stylesheet. The WASM
# is built here, because it is split (Trunk cannot split one: trunk-rs/trunk#1022):
#   1. cargo builds web/ for wasm32 (`wasm-release`; `.cargo/config.toml` keeps the
#      relocations the splitter reads);
#   2. `wasm-split-cli` moves the code reachable only from the page's split points
#      (`#[wasm_split]` in web/src/components/on_first_use.rs) into chunks, fetched the first
#      time a panel opens, and writes their loader, `__wasm_split.js`;
#   3. `wasm-bindgen` makes the main module's JS; `wasm-opt -Oz` shrinks every module, and
#      terser the JS;
#   4. the files go to dist/pkg-<hash of their contents>/, so a page left open across a
#      server update never mixes old and new modules (an old chunk's fetch fails, and the
#      page says to reload), and dist/index.html gets the tags that load them.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-release}"
export PATH="${TANDEM_TOOLS_DIR:-$HOME/.cache/tandem-tools}/node_modules/.bin:$HOME/.cargo/bin:$PATH"

build_page() {
  # Trunk builds offline (it passes --offline to cargo), so fetch crates first.
  cargo fetch --quiet
  trunk build --release --skip-version-check >/dev/null
  cargo build --quiet -p tandem-web --target wasm32-unknown-unknown --profile wasm-release
  local input=target/wasm32-unknown-unknown/wasm-release/tandem-web.wasm
  local staging
  staging=$(mktemp -d)
  trap 'rm -rf "$staging"' RETURN
  wasm-split-cli --target web --out-name tandem-web "$input" "$staging"
  wasm-bindgen --target web --keep-lld-exports --no-demangle --no-typescript --remove-name-section \
    --out-name tandem-web --out-dir "$staging" "$staging/tandem-web.wasm"
  rm "$staging/tandem-web.wasm"
  local module
  # The splitter's modules carry a names subsection binaryen does not know; it says so for each.
  for module in "$staging"/*.wasm; do
    wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
      --enable-sign-ext --enable-reference-types --enable-multivalue \
      "$module" -o "$module" 2> >(grep -v 'unknown name subsection' >&2)
  done
  for module in "$staging"/*.js; do
    terser "$module" --module --compress --mangle -o "$module"
  done
  local hash
  hash=$(cat "$staging"/* | sha256sum | cut -c1-16)
  local pkg="pkg-$hash"
  rm -rf dist/pkg-*
  mkdir -p "dist/$pkg"
  cp "$staging"/* "dist/$pkg/"
  # Trunk leaves the head's end alone; the loading tags go just before it.
  local tags="<link rel=\"modulepreload\" href=\"/$pkg/tandem-web.js\" />"
  tags+="<link rel=\"modulepreload\" href=\"/$pkg/__wasm_split.js\" />"
  tags+="<link rel=\"preload\" href=\"/$pkg/tandem-web_bg.wasm\" as=\"fetch\" type=\"application/wasm\" crossorigin />"
  tags+="<script type=\"module\">import init from '/$pkg/tandem-web.js'; init({ module_or_path: '/$pkg/tandem-web_bg.wasm' });</script>"
  sed -i "s#</head>#${tags}</head>#" dist/index.html
}

case "$profile" in
  release) build_page; cargo build --release --bin tandem ;;
  debug) build_page; cargo build --bin tandem ;;
  page) build_page ;;
  *) echo "usage: scripts/build.sh [release|debug|page]" >&2; exit 2 ;;
esac
