-- The Neovim setup of the screenshots: the plugin from this checkout, the
-- real `hiera lsp` from build/dev, code lenses refreshed as the file changes.
local repo = os.getenv('HIERA_REPO')
vim.opt.runtimepath:append(repo .. '/editors/nvim')
vim.o.termguicolors = false
vim.o.number = true
vim.o.signcolumn = 'yes'
require('hiera').setup({
  cmd = { repo .. '/build/dev/bin/hiera', 'lsp' },
  on_attach = function(_, bufnr)
    vim.api.nvim_create_autocmd({ 'BufEnter', 'CursorHold', 'InsertLeave' }, {
      buffer = bufnr, callback = vim.lsp.codelens.refresh,
    })
    vim.lsp.codelens.refresh()
  end,
})
