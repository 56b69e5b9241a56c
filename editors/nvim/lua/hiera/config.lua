-- The plugin's options: the defaults, and the values setup{} was given.
-- Every other module reads them from here (lsp/hiera.lua included), so the
-- defaults are written once.
local M = {}

M.defaults = {
  -- The language server: `hiera lsp` on stdio.
  cmd = { 'hiera', 'lsp' },
  filetypes = { 'cuda', 'python' },
  -- Searched upward from the file, in this order (as vim.fs.root does): the
  -- first marker found anywhere above wins; no marker: the file's directory.
  root_markers = { 'pyproject.toml', 'setup.py', 'compile_commands.json', '.git' },
  -- hiera's settings: sent as initializationOptions and answered on
  -- workspace/configuration for the section "hiera".
  settings = {},
  -- vim.notify on the begin and the end of each job's $/progress, besides
  -- the standard progress handling (fidget.nvim, statuslines).
  notify_progress = true,
  -- Lua patterns matched against code action titles by :HieraOptimize and
  -- :HieraProfile.
  actions = { optimize = '^Optimize', profile = '^Profile' },
  -- Passed to the client as they are (nil: Neovim's defaults).
  on_attach = nil,
  on_init = nil,
  on_exit = nil,
  capabilities = nil,
  handlers = nil,
}

M.options = vim.deepcopy(M.defaults)

function M.set(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  return M.options
end

return M
