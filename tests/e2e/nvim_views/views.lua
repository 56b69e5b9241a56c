-- The real `hiera lsp`'s views in Neovim 0.7+, through the editors/nvim
-- plugin (require('hiera').setup{}): the outline (textDocument/documentSymbol,
-- also as Neovim's own symbols_to_items list), go to definition with
-- vim.lsp.buf.definition() moving the cursor from a launch to its kernel,
-- inlay hints (Neovim 0.7 has no inlay-hint UI, so the protocol is checked
-- through vim.lsp.buf_request_sync) and workspace/symbol. No worker needed.
--
--   HIERA_BIN=build/dev/bin/hiera HIERA_TEST_LSP=$HIERA_BIN sh tests/e2e/nvim/headless.sh tests/e2e/nvim_views/views.lua
--
-- Prints one "ok N - what" line per check and exits 0, or "not ok N - what:
-- why" and exits 1 on the first failure. The fixtures are copied to a scratch
-- folder and never written.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/../nvim/harness.lua')
local fail, check_eq, wait_for, request = h.fail, h.check_eq, h.wait_for, h.request
local hiera_bin = os.getenv('HIERA_BIN')

local function pos(line, character) return { line = line, character = character } end
local function range(l1, c1, l2, c2) return { start = pos(l1, c1), ['end'] = pos(l2, c2) } end

local function edit(path)
  local bufnr = h.edit(path)
  h.wait_attached(bufnr)
  return bufnr
end

local function run()
  if not hiera_bin or hiera_bin == '' then fail('setup', 'HIERA_BIN is not set') end
  h.setup_editor({ plugin = true })
  local scratch = h.scratch()
  h.copy(h.fixtures .. '/saxpy.cu', scratch .. '/saxpy.cu')
  h.copy(h.fixtures .. '/model.py', scratch .. '/model.py')

  h.setup_plugin({ cmd = { hiera_bin, 'lsp' }, settings = { gpu = 'h200' } })

  -- CUDA ----------------------------------------------------------------------
  local cu = edit(scratch .. '/saxpy.cu')
  local caps = h.client().server_capabilities
  check_eq('the views are advertised',
    { caps.documentSymbolProvider, caps.definitionProvider, caps.workspaceSymbolProvider, caps.inlayHintProvider },
    { true, true, true, { resolveProvider = false } })
  h.wait_diagnostics(cu, 2, 'diagnostics of saxpy.cu (its analysis is built)')

  local cost = 'est. 3.00 µs on H200 (launch-bound)'
  local symbols = request(cu, 'textDocument/documentSymbol', { textDocument = vim.lsp.util.make_text_document_params(cu) })
  check_eq('the outline of saxpy.cu', symbols, {
    { name = 'saxpy', detail = cost, kind = 12, range = range(5, 0, 8, 1), selectionRange = range(5, 16, 5, 21) },
    { name = 'run_saxpy', detail = '1 launch', kind = 12, range = range(10, 0, 12, 1), selectionRange = range(10, 5, 10, 14),
      children = { { name = 'saxpy<<<(n + 99) / 100, 100>>>', detail = cost, kind = 24,
                     range = range(11, 2, 11, 44), selectionRange = range(11, 2, 11, 7) } } },
  })
  local items = vim.lsp.util.symbols_to_items(symbols, cu)
  check_eq("Neovim's symbol list (vim.lsp.util.symbols_to_items)",
    vim.tbl_map(function(item) return { item.lnum, item.col, item.text } end, items),
    { { 6, 17, '[Function] saxpy' }, { 11, 6, '[Function] run_saxpy' }, { 12, 3, '[Event] saxpy<<<(n + 99) / 100, 100>>>' } })

  -- Go to definition, as `gd` would: from the launch's kernel name to the kernel.
  vim.api.nvim_win_set_cursor(0, { 12, 4 })
  vim.lsp.buf.definition()
  wait_for('vim.lsp.buf.definition() to move the cursor', function()
    local row = vim.api.nvim_win_get_cursor(0)[1]
    return row == 6
  end)
  check_eq('the cursor is on the kernel (buffer, row, column)',
    { vim.api.nvim_get_current_buf(), unpack(vim.api.nvim_win_get_cursor(0)) }, { cu, 6, 16 })
  check_eq('definition off a kernel name is empty',
    request(cu, 'textDocument/definition', { textDocument = { uri = vim.uri_from_bufnr(cu) }, position = pos(11, 20) }), {})

  check_eq('inlay hints of saxpy.cu',
    request(cu, 'textDocument/inlayHint', { textDocument = { uri = vim.uri_from_bufnr(cu) }, range = range(0, 0, 13, 0) }), {
      { position = pos(11, 45), label = '100 threads/block · occupancy ≤ 100%', kind = 1, paddingLeft = true,
        tooltip = 'The block (100) has 100 threads. Estimated occupancy on H200: at most 16 blocks of 4 warps per SM '
          .. '(64 of 64 warps), limited by warps; registers are not counted' },
    })
  check_eq('inlay hints outside the range are left out',
    request(cu, 'textDocument/inlayHint', { textDocument = { uri = vim.uri_from_bufnr(cu) }, range = range(0, 0, 10, 0) }), {})

  -- Python --------------------------------------------------------------------
  local py = edit(scratch .. '/model.py')
  wait_for('the analysis of model.py', function()
    local result = request(py, 'textDocument/documentSymbol', { textDocument = vim.lsp.util.make_text_document_params(py) })
    return #result == 1
  end)
  local model = request(py, 'textDocument/documentSymbol', { textDocument = vim.lsp.util.make_text_document_params(py) })[1]
  check_eq('the module, forward and its ops',
    { model.name, model.kind, model.detail, model.children[1].name, model.children[1].kind,
      vim.tbl_map(function(op) return op.name .. ' · ' .. op.kind end, model.children[1].children) },
    { 'Model', 5, 'est. 7.07 µs on H200 (memory-bound, fused)', 'forward', 6,
      { 'self.fc1 · 25', 'torch.nn.functional.gelu · 25', 'self.fc2 · 25', '+ · 25' } })
  check_eq('inlay hints of forward',
    vim.tbl_map(function(h) return { h.position.line, h.position.character, h.label } end,
      request(py, 'textDocument/inlayHint', { textDocument = { uri = vim.uri_from_bufnr(py) }, range = range(0, 0, 22, 0) })),
    { { 12, 55, '≈ 7.07 µs' }, { 13, 66, '≈ 13.1 µs' } })

  check_eq('workspace/symbol "SXP" (a subsequence, any case)',
    vim.tbl_map(function(s) return { s.name, s.kind, s.location.uri, s.location.range } end,
      request(py, 'workspace/symbol', { query = 'SXP' })),
    { { 'saxpy', 12, vim.uri_from_bufnr(cu), range(5, 16, 5, 21) } })

  check_eq('exit code after shutdown', h.stop(), 0)
end

h.main('nvim views', 60, run)
