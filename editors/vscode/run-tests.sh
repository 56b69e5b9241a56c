#!/bin/sh
# The VS Code extension's checks (ctest: hiera_vscode_unit, hiera_vscode_e2e).
#   sh run-tests.sh unit  typecheck; unit tests of settings.ts / commands.ts /
#                         status.ts against a stubbed `vscode` module
#   sh run-tests.sh e2e   esbuild bundle; protocol tests against hiera lsp
#                         (HIERA_BIN; HIERA_FAKE_WORKER as its worker in the
#                         report and task spec test) and hiera-test-lsp (HIERA_TEST_LSP);
#                         the bundled extension activated against them; vsce
#                         package → hiera.vsix, and its contents checked
#   sh run-tests.sh       both
# Exits 77, which ctest reports as skipped, when node, npm or node_modules is
# missing. Writes dist/, out/ and hiera.vsix here (all ignored by git).
cd "$(dirname "$0")" || exit 1
what=${1:-all}

if ! command -v node >/dev/null 2>&1; then
  echo "SKIP: node is not installed; scripts/setup installs it (Debian package nodejs)"
  exit 77
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
  echo "SKIP: node $(node --version) is too old (the extension's tools need node 18+)"
  exit 77
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "SKIP: npm is not installed; scripts/setup installs it"
  exit 77
fi
for package in vscode-languageclient esbuild typescript @types/vscode @types/node @vscode/vsce \
  vscode-languageserver-protocol vscode-languageserver-textdocument; do
  if [ ! -f "node_modules/$package/package.json" ]; then
    echo "SKIP: editors/vscode/node_modules/$package is missing; scripts/setup installs it (npm ci in editors/vscode)"
    exit 77
  fi
done

set -e
step() { printf '\n== %s\n' "$*"; }

# Compiled modules for the tests (out/), from src/ as they are now.
step "esbuild src/{settings,status,commands}.ts → out/"
npm run -s build:test

if [ "$what" = unit ] || [ "$what" = all ]; then
  step "tsc --noEmit"
  npm run -s typecheck
  step "unit tests (stubbed vscode module)"
  node --test test/unit/*.test.js
fi

if [ "$what" = e2e ] || [ "$what" = all ]; then
  if [ -z "${HIERA_BIN:-}" ] || [ -z "${HIERA_TEST_LSP:-}" ]; then
    echo "note: HIERA_BIN / HIERA_TEST_LSP unset: the protocol tests skip (ctest sets them and HIERA_FAKE_WORKER)"
  fi
  step "esbuild bundle → dist/extension.js"
  npm run -s build
  step "protocol tests (hiera lsp, hiera-test-lsp, the bundled extension)"
  node --test test/protocol/*.test.js
  step "vsce package → hiera.vsix (no network)"
  rm -f hiera.vsix
  npm run -s package </dev/null
  node --test test/package/*.test.js
fi
