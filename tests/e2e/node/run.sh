#!/bin/sh
# Runs the Node LSP client suite (ctest: hiera_e2e_node; with the argument
# `features`, hiera_e2e_node_features). Exits 77, which ctest reports as
# skipped, when node or the npm packages are missing.
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
: "${HIERA_BIN:?HIERA_BIN must name the hiera binary}"
# `run.sh features` (ctest hiera_e2e_node_features): the real hiera lsp's
# features, its optimizer on a CPU worker included; it needs hiera-worker and a
# python3 that imports torch. Without an argument: every other test file.
if [ "${1:-}" = features ]; then
  if [ ! -x "$(dirname "$HIERA_BIN")/hiera-worker" ]; then
    echo "SKIP: $(dirname "$HIERA_BIN")/hiera-worker was not built (no CUDA toolkit): the optimizer has no worker"
    exit 77
  fi
  if ! ../../../scripts/find-torch-python >/dev/null; then
    echo "SKIP: no python3 that imports torch (set HIERA_PYTHON, or apt-get install python3-torch)"
    exit 77
  fi
  exec node --test test/features.test.js test/launch_contract.test.js
fi
: "${HIERA_TEST_LSP:?HIERA_TEST_LSP must name the hiera-test-lsp binary}"
set --
for file in test/*.test.js; do
  case "$file" in test/features.test.js | test/launch_contract.test.js) ;; *) set -- "$@" "$file" ;; esac
done
exec node --test "$@"
