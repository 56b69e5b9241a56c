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
  -- Buffer-local mappings set when the client attaches, before on_attach
  -- (which may map them again): hover = the key for vim.lsp.buf.hover.
  -- A key false, or keymaps = false: no mapping.
  keymaps = { hover = 'K' },
  -- Refresh the code lenses (estimates, measurements, Optimize/Profile) on
  -- attach, BufEnter, CursorHold and InsertLeave. false: leave them to you.
  codelens = true,
  -- Called after the plugin's own attach (the mappings, the lens refresh).
  on_attach = nil,
  -- Passed to the client as they are (nil: Neovim's defaults).
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
