#!/bin/sh
# Runs the real `hiera lsp` features test in headless Neovim (ctest:
# hiera_e2e_nvim_features). Exits 77, which ctest reports as skipped, when
# nvim, hiera-worker or a python3 that imports torch is missing.
root="$(cd "$(dirname "$0")/../../.." && pwd)" || exit 1
: "${HIERA_BIN:?HIERA_BIN must name the hiera binary}"
if [ ! -x "$(dirname "$HIERA_BIN")/hiera-worker" ]; then
  echo "SKIP: $(dirname "$HIERA_BIN")/hiera-worker was not built (no CUDA toolkit): the optimizer has no worker"
  exit 77
fi
if ! "$root/scripts/find-torch-python" >/dev/null; then
  echo "SKIP: no python3 that imports torch (set HIERA_PYTHON, or apt-get install python3-torch)"
  exit 77
fi
# headless.sh (shared with the hiera-test-lsp suites) asks for HIERA_TEST_LSP; this script's server is HIERA_BIN.
export HIERA_TEST_LSP="${HIERA_TEST_LSP:-$HIERA_BIN}"
# An argument names another script of this folder (launch_contract: ctest hiera_e2e_nvim_launch_contract).
exec sh "$root/tests/e2e/nvim/headless.sh" "tests/e2e/nvim_features/${1:-features}.lua"
