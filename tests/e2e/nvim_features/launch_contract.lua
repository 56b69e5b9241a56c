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

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/../nvim/harness.lua')
local fail, check, check_eq, wait_for = h.fail, h.check, h.check_eq, h.wait_for
local titles, code_actions = h.titles, h.code_actions
local hiera_bin = os.getenv('HIERA_BIN')

local function run()
  if not hiera_bin or hiera_bin == '' then fail('setup', 'HIERA_BIN is not set') end
  h.setup_editor({ plugin = true })
  local scratch = h.scratch()
  local original = vim.fn.readfile(h.fixtures .. '/vector_add.cu')
  -- The lines the action inserts, exactly (the Node client's test reads the same file).
  local contract = vim.fn.readfile(h.fixtures .. '/vector_add.contract.txt')
  vim.fn.writefile(original, scratch .. '/vector_add.cu')

  h.setup_plugin({
    cmd = { hiera_bin, 'lsp' },
    settings = {
      worker = { command = { hiera_bin, 'worker' }, device = 'cpu' },  -- a CPU run, asked for: else jobs need a GPU worker
      runsDir = scratch .. '/runs',
    },
  })

  local cu = h.edit(scratch .. '/vector_add.cu')
  local client = h.wait_attached(cu)

  -- On the kernel's name (line 4): its actions, the contract last.
  local actions = code_actions(cu, 4, 18)
  check_eq('code actions on the unannotated kernel', titles(actions), {
    'Optimize kernel vector_add', 'Profile kernel vector_add', 'Show task spec for vector_add', 'Add launch contract',
  })
  check('the contract action is resolved lazily', actions[4].edit == nil)
  local resolved = h.request(cu, 'codeAction/resolve', actions[4])
  check('resolved to an edit', resolved.edit ~= nil, vim.inspect(resolved))
  vim.lsp.util.apply_workspace_edit(resolved.edit, client.offset_encoding)

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
  h.at(cu, 12, 18)
  vim.cmd('HieraProfile')
  local job = h.wait_job('the profile job to begin', 'hiera-job-1', { timeout = 30000 })
  check_eq('the job is the kernel profile', job.title, 'Profile vector_add')
  job = h.wait_job('the profile job to end', 'hiera-job-1', { done = true, timeout = 60000 })
  h.out('# profile ended: ' .. tostring(job.end_message))

  check_eq('exit code after shutdown', h.stop(), 0)
end

h.main('nvim launch contract', 120, run)
