-- The `hiera` language server config for Neovim 0.11+ (vim.lsp.config /
-- vim.lsp.enable find it on 'runtimepath'):
--
--   vim.lsp.enable('hiera')                      -- these defaults
--   vim.lsp.config('hiera', { settings = { hiera = { ... } } })  -- to change them
--
-- or require('hiera').setup{...}, which does both and works on 0.7 too.
-- Loading this file starts nothing.
local defaults = require('hiera.config').defaults

return {
  cmd = vim.deepcopy(defaults.cmd),
  filetypes = vim.deepcopy(defaults.filetypes),
  root_markers = vim.deepcopy(defaults.root_markers),
  -- hiera's settings: initializationOptions, then workspace/configuration
  -- (section "hiera", answered from `settings`).
  init_options = vim.empty_dict(),
  settings = { hiera = vim.empty_dict() },
  handlers = {
    -- Chains to the default handler (so fidget.nvim and statuslines see the
    -- progress) and keeps each job's messages for :HieraReport.
    ['$/progress'] = function(...) return require('hiera.progress').handler(...) end,
    -- Through vim.notify: a refused setting is a warning the user sees.
    ['window/showMessage'] = function(...) return require('hiera').show_message(...) end,
  },
  -- K -> hover and the code lenses refreshed (options keymaps, codelens).
  on_attach = function(client, bufnr) require('hiera').default_on_attach(client, bufnr) end,
}
