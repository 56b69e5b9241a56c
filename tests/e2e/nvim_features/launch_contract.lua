-- "Add launch contract" in Neovim 0.7+ through the editors/nvim plugin,
-- against the real `hiera lsp`: the unannotated fixtures/vector_add.cu offers
-- the action on its kernel, codeAction/resolve gives the edit, Neovim applies
-- it (vim.lsp.util.apply_workspace_edit) and the buffer is checked line by
-- line; the contract has no annotation diagnostics and is not offered again;
-- then :HieraProfile on the kernel starts a job on the CPU worker
-- (worker.device "cpu", asked for explicitly) whose progress begins.
--
--   HIERA_BIN=build/dev/bin/hiera HIERA_TEST_LSP=$HIERA_BIN sh tests/e2e/nvim/headless.sh tests/e2e/nvim_features/launch_contract.lua
--
-- One "ok N - what" line per check; exit 0, or "not ok …" and exit 1.

local script_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local repo = vim.fn.fnamemodify(script_dir .. '/../../..', ':p'):gsub('/$', '')
local fixtures = vim.fn.fnamemodify(os.getenv('HIERA_E2E_FIXTURES') or (repo .. '/tests/e2e/fixtures'), ':p'):gsub('/$', '')
local hiera_bin = os.getenv('HIERA_BIN')

local tap = dofile(repo .. '/tests/e2e/nvim/tap.lua')
local WAIT_MS = tap.WAIT_MS
local fail, check, check_eq, wait_for = tap.fail, tap.check, tap.check_eq, tap.wait_for

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

local function at(bufnr, row, col)
  vim.api.nvim_win_set_buf(0, bufnr)
  vim.api.nvim_win_set_cursor(0, { row, col })
end

local function code_actions(bufnr, row, col)
  at(bufnr, row, col)
  local params = vim.lsp.util.make_range_params()
  params.context = { diagnostics = {} }
  return request(bufnr, 'textDocument/codeAction', params)
end

local function titles(actions) return vim.tbl_map(function(a) return a.title end, actions) end


local function run()
  if not hiera_bin or hiera_bin == '' then fail('setup', 'HIERA_BIN is not set') end
  vim.g.loaded_python3_provider = 0
  vim.g.loaded_python_provider = 0
  vim.cmd('filetype on')
  vim.cmd('set runtimepath+=' .. vim.fn.fnameescape(repo .. '/editors/nvim'))
  scratch = vim.fn.tempname()
  vim.fn.mkdir(scratch, 'p')
  local original = vim.fn.readfile(fixtures .. '/vector_add.cu')
  -- The lines the action inserts, exactly (the Node client's test reads the same file).
  local contract = vim.fn.readfile(fixtures .. '/vector_add.contract.txt')
  vim.fn.writefile(original, scratch .. '/vector_add.cu')

  require('hiera').setup({
    cmd = { hiera_bin, 'lsp' },
    settings = {
      worker = { command = { hiera_bin, 'worker' }, device = 'cpu' },  -- a CPU run, asked for: else jobs need a GPU worker
      runsDir = scratch .. '/runs',
    },
    on_exit = function(code) exit_code = code end,
  })

  vim.cmd('silent edit ' .. vim.fn.fnameescape(scratch .. '/vector_add.cu'))
  local cu = vim.api.nvim_get_current_buf()
  wait_for('hiera to attach', function()
    return exit_code ~= nil or #vim.tbl_filter(function(c) return c.name == 'hiera' end, vim.lsp.buf_get_clients(cu)) > 0
  end)
  if exit_code ~= nil then fail('initialize', 'hiera lsp exited with code ' .. exit_code) end
  client_id = vim.tbl_filter(function(c) return c.name == 'hiera' end, vim.lsp.buf_get_clients(cu))[1].id

  -- On the kernel's name (line 4): its actions, the contract last.
  local actions = code_actions(cu, 4, 18)
  check_eq('code actions on the unannotated kernel', titles(actions), {
    'Optimize kernel vector_add', 'Profile kernel vector_add', 'Show task spec for vector_add', 'Add launch contract',
  })
  check('the contract action is resolved lazily', actions[4].edit == nil)
  local resolved = request(cu, 'codeAction/resolve', actions[4])
  check('resolved to an edit', resolved.edit ~= nil, vim.inspect(resolved))
  vim.lsp.util.apply_workspace_edit(resolved.edit, client().offset_encoding)

  local expected = {}
  for i = 1, 3 do expected[#expected + 1] = original[i] end
  for _, line in ipairs(contract) do expected[#expected + 1] = line end
  for i = 4, #original do expected[#expected + 1] = original[i] end
  check_eq('the buffer with the contract above the kernel', vim.api.nvim_buf_get_lines(cu, 0, -1, false), expected)

  -- The server analysed the new text: no annotation diagnostics, and no second offer.
  wait_for('the edit to reach the server', function()
    return not vim.tbl_contains(titles(code_actions(cu, 12, 18)), 'Add launch contract')
  end)
  check_eq('no annotation diagnostics', vim.tbl_filter(function(d) return d.code == 'hiera.annotation' end,
    vim.diagnostic.get(cu)), {})

  -- :HieraProfile on the kernel: a job on the CPU worker, its progress begun.
  local progress = require('hiera.progress')
  at(cu, 12, 18)
  vim.cmd('HieraProfile')
  wait_for('the profile job to begin', function() return progress.find('hiera-job-1') ~= nil end, 30000)
  check_eq('the job is the kernel profile', progress.find('hiera-job-1').title, 'Profile vector_add')
  wait_for('the profile job to end', function() return progress.find('hiera-job-1').done end, 60000)
  tap.out('# profile ended: ' .. tostring(progress.find('hiera-job-1').end_message))

  vim.lsp.stop_client(client_id)
  wait_for('hiera lsp to exit', function() return exit_code ~= nil end)
  check_eq('exit code after shutdown', exit_code, 0)
end

tap.main('nvim launch contract', 120, run, function()
  if exit_code == nil and client_id then pcall(vim.lsp.stop_client, client_id, true) end
  if scratch then vim.fn.delete(scratch, 'rf') end
end)
