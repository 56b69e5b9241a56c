#!/bin/sh
# Runs one Lua test script in headless Neovim (usage: headless.sh SCRIPT, a
# path from the repository root), isolated from the user's setup. Exits 77,
# which ctest reports as skipped, when nvim is missing.
cd "$(dirname "$0")/../../.." || exit 1
if ! command -v nvim >/dev/null 2>&1; then
  echo "SKIP: nvim is not installed; scripts/setup installs it (Debian package neovim)"
  exit 77
fi
: "${HIERA_TEST_LSP:?HIERA_TEST_LSP must name the hiera-test-lsp binary}"
# A private HOME/XDG tree: no user config, shada, swap or log files leak in or out.
scratch=$(mktemp -d) || exit 1
trap 'rm -rf "$scratch"' EXIT
export XDG_CONFIG_HOME="$scratch/config" XDG_DATA_HOME="$scratch/data" XDG_STATE_HOME="$scratch/state" \
  XDG_CACHE_HOME="$scratch/cache"
# stdin from /dev/null: headless nvim must never wait for a terminal.
nvim --headless --clean -n -i NONE -c "luafile $1" </dev/null
