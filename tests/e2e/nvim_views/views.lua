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

local script_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local repo = vim.fn.fnamemodify(script_dir .. '/../../..', ':p'):gsub('/$', '')
local fixtures = vim.fn.fnamemodify(os.getenv('HIERA_E2E_FIXTURES') or (repo .. '/tests/e2e/fixtures'), ':p'):gsub('/$', '')
local hiera_bin = os.getenv('HIERA_BIN')

local tap = dofile(repo .. '/tests/e2e/nvim/tap.lua')
local WAIT_MS = tap.WAIT_MS
local fail, check, check_eq, wait_for = tap.fail, tap.check, tap.check_eq, tap.wait_for

local function copy(from, to)
  local input = assert(io.open(from, 'rb'))
  local text = input:read('*a')
  input:close()
  local output = assert(io.open(to, 'wb'))
  output:write(text)
  output:close()
end

local client_id
local exit_code
local scratch

local function client() return vim.lsp.get_client_by_id(client_id) end

local function request(bufnr, method, params)
  local responses, err = vim.lsp.buf_request_sync(bufnr, method, params, WAIT_MS)
  if not responses then fail(method, 'no answer: ' .. tostring(err)) end
  local response = responses[client_id]
  if not response then fail(method, 'no answer from the client ' .. client_id) end
  if response.err then fail(method, 'error reply: ' .. vim.inspect(response.err)) end
  return response.result
end

local function pos(line, character) return { line = line, character = character } end
local function range(l1, c1, l2, c2) return { start = pos(l1, c1), ['end'] = pos(l2, c2) } end

local function edit(path)
  vim.cmd('silent edit ' .. vim.fn.fnameescape(path))
  local bufnr = vim.api.nvim_get_current_buf()
  wait_for('hiera to attach to ' .. path, function()
    return exit_code ~= nil or #vim.tbl_filter(function(c) return c.name == 'hiera' end, vim.lsp.buf_get_clients(bufnr)) > 0
  end)
  if exit_code ~= nil then fail('initialize', 'hiera lsp exited with code ' .. exit_code) end
  return bufnr
end

local function run()
  if not hiera_bin or hiera_bin == '' then fail('setup', 'HIERA_BIN is not set') end
  vim.g.loaded_python3_provider = 0
  vim.g.loaded_python_provider = 0
  vim.cmd('filetype on')
  vim.cmd('set runtimepath+=' .. vim.fn.fnameescape(repo .. '/editors/nvim'))
  scratch = vim.fn.tempname()
  vim.fn.mkdir(scratch, 'p')
  copy(fixtures .. '/saxpy.cu', scratch .. '/saxpy.cu')
  copy(fixtures .. '/model.py', scratch .. '/model.py')

  require('hiera').setup({
    cmd = { hiera_bin, 'lsp' },
    settings = { gpu = 'h200' },
    on_exit = function(code) exit_code = code end,
  })

  -- CUDA ----------------------------------------------------------------------
  local cu = edit(scratch .. '/saxpy.cu')
  client_id = vim.tbl_filter(function(c) return c.name == 'hiera' end, vim.lsp.buf_get_clients(cu))[1].id
  local caps = client().server_capabilities
  check_eq('the views are advertised',
    { caps.documentSymbolProvider, caps.definitionProvider, caps.workspaceSymbolProvider, caps.inlayHintProvider },
    { true, true, true, { resolveProvider = false } })
  wait_for('diagnostics of saxpy.cu (its analysis is built)', function() return #vim.diagnostic.get(cu) == 2 end)

  local cost = 'est. 2.62 µs on H200 (memory-bound)'
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
    { 'Model', 5, 'est. 7.14 µs on H200 (memory-bound)', 'forward', 6,
      { 'self.fc1 · 25', 'torch.nn.functional.gelu · 25', 'self.fc2 · 25', '+ · 25' } })
  check_eq('inlay hints of forward',
    vim.tbl_map(function(h) return { h.position.line, h.position.character, h.label } end,
      request(py, 'textDocument/inlayHint', { textDocument = { uri = vim.uri_from_bufnr(py) }, range = range(0, 0, 22, 0) })),
    { { 12, 55, '≈ 7.14 µs' }, { 13, 66, '≈ 7.14 µs' } })

  check_eq('workspace/symbol "SXP" (a subsequence, any case)',
    vim.tbl_map(function(s) return { s.name, s.kind, s.location.uri, s.location.range } end,
      request(py, 'workspace/symbol', { query = 'SXP' })),
    { { 'saxpy', 12, vim.uri_from_bufnr(cu), range(5, 16, 5, 21) } })

  vim.lsp.stop_client(client_id)
  wait_for('hiera lsp to exit', function() return exit_code ~= nil end)
  check_eq('exit code after shutdown', exit_code, 0)
end

tap.main('nvim views', 60, run, function()
  if exit_code == nil and client_id then pcall(vim.lsp.stop_client, client_id, true) end
  if scratch then vim.fn.delete(scratch, 'rf') end
end)
