#!/bin/sh
# Runs the Node LSP client suite (ctest: hiera_e2e_node). Exits 77, which ctest
# reports as skipped, when node or the npm packages are missing.
cd "$(dirname "$0")" || exit 1
if ! command -v node >/dev/null 2>&1; then
  echo "SKIP: node is not installed; scripts/setup installs it (Debian package nodejs)"
  exit 77
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
  echo "SKIP: node $(node --version) is too old (the suite needs node 18+ for node --test)"
  exit 77
fi
for package in vscode-languageserver-protocol vscode-languageserver-textdocument; do
  if [ ! -f "node_modules/$package/package.json" ]; then
    echo "SKIP: tests/e2e/node/node_modules/$package is missing; scripts/setup installs it (npm ci in tests/e2e/node)"
    exit 77
  fi
done
: "${HIERA_TEST_LSP:?HIERA_TEST_LSP must name the hiera-test-lsp binary}"
: "${HIERA_BIN:?HIERA_BIN must name the hiera binary}"
exec node --test test/*.test.js
