-- Defines hiera's user commands; starts nothing. The server starts through
-- require('hiera').setup{} (any Neovim 0.7+) or vim.lsp.enable('hiera') (0.11+).
if vim.g.loaded_hiera then return end
vim.g.loaded_hiera = true
if vim.fn.has('nvim-0.7') ~= 1 then return end
require('hiera.commands').register()
