#!/bin/sh
# Runs the hiera Neovim plugin test (ctest: hiera_e2e_nvim_plugin): editors/nvim
# on 'runtimepath', driven through require('hiera').setup{} and the :Hiera*
# commands against hiera-test-lsp.
exec sh "$(dirname "$0")/../nvim/headless.sh" tests/e2e/nvim_plugin/test.lua
