#!/bin/sh
# Runs the hiera Neovim plugin tests (ctest: hiera_e2e_nvim_plugin): editors/nvim
# on 'runtimepath', driven through require('hiera').setup{} and the :Hiera*
# commands, first against hiera-test-lsp (test.lua), then against the real
# hiera lsp with hiera-fake-worker as its worker (real_server.lua).
here=$(dirname "$0")
sh "$here/../nvim/headless.sh" tests/e2e/nvim_plugin/test.lua || exit $?
exec sh "$here/../nvim/headless.sh" tests/e2e/nvim_plugin/real_server.lua
