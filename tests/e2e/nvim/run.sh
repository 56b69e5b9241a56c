#!/bin/sh
# Runs the Neovim LSP client test (ctest: hiera_e2e_nvim).
exec sh "$(dirname "$0")/headless.sh" tests/e2e/nvim/run.lua
