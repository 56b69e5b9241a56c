-- The Neovim plugin against the real `hiera lsp` (HIERA_BIN), with
-- hiera-fake-worker (HIERA_FAKE_WORKER: canned answers, no GPU) as its worker,
-- on a copy of samples/fusion/07_elementwise_chain.py: :HieraProfile runs the
-- server's "Profile Model.forward" action, :HieraReport opens the report file
-- hiera.jobs names for the job, :HieraSpec opens the task spec the server
-- wrote (Neovim 0.7 takes no window/showDocument: the plugin opens it).
--
--   HIERA_TEST_LSP=… HIERA_BIN=build/dev/bin/hiera HIERA_FAKE_WORKER=build/dev/bin/hiera-fake-worker \
--     sh tests/e2e/nvim/headless.sh tests/e2e/nvim_plugin/real_server.lua

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/../nvim/harness.lua')
local out, check, check_eq, wait_for = h.out, h.check, h.check_eq, h.wait_for
local notes, notes_text = h.notes, h.notes_text
local hiera_bin = os.getenv('HIERA_BIN')
local fake_worker = os.getenv('HIERA_FAKE_WORKER')

local function run()
  if not hiera_bin or hiera_bin == '' or not fake_worker or fake_worker == '' then
    out('ok - SKIP: HIERA_BIN or HIERA_FAKE_WORKER is not set')
    return
  end
  h.setup_editor({ plugin = true })
  local dir = h.scratch()
  local file = dir .. '/07_elementwise_chain.py'
  h.copy(h.repo .. '/samples/fusion/07_elementwise_chain.py', file)
  local runs = dir .. '/runs'

  h.setup_plugin({
    cmd = { hiera_bin, 'lsp' },
    settings = { worker = { command = { fake_worker } }, runsDir = runs },
  })
  local py = h.edit(file)
  local client = h.wait_attached(py)

  -- On attach: K is hover in the buffer, the code lenses are fetched, and
  -- window/showMessage goes through vim.notify.
  local k = vim.fn.maparg('K', 'n', false, true)
  check('K is mapped in the buffer', k.buffer == 1, vim.inspect(k))
  check_eq('its description', k.desc, 'hiera: hover (vim.lsp.buf.hover)')
  local hover, hovered = vim.lsp.buf.hover, 0
  vim.lsp.buf.hover = function() hovered = hovered + 1 end
  vim.cmd('normal K')
  vim.lsp.buf.hover = hover
  check_eq('K calls vim.lsp.buf.hover', hovered, 1)
  wait_for('the code lenses', function() return #vim.lsp.codelens.get(py) > 0 end)
  check('showMessage goes to the plugin', client.handlers['window/showMessage'] == require('hiera').show_message)
  require('hiera').show_message(nil, { type = 2, message = 'hiera: settings: gpu: unknown GPU "x"' }, { client_id = h.client_id })
  check_eq('a warning through vim.notify', notes[#notes], { msg = 'hiera: settings: gpu: unknown GPU "x"', level = vim.log.levels.WARN })

  -- :checkhealth hiera: the server binary and its version, the other checks.
  vim.cmd('checkhealth hiera')
  local health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  local version = vim.trim(vim.fn.system({ hiera_bin, '--version' }))
  check('checkhealth names the server and its --version',
    health:find('server binary: ' .. hiera_bin .. ' (' .. version .. ')', 1, true) ~= nil, health)
  check('checkhealth checks python with torch', health:find('python3', 1, true) ~= nil, health)
  check('checkhealth checks a GPU', health:find('GPU', 1, true) ~= nil, health)
  check('checkhealth checks the knowledge directory', health:find('knowledge directory', 1, true) ~= nil, health)
  vim.cmd('tabclose')
  vim.api.nvim_set_current_buf(py)

  -- :HieraProfile in forward (line 17).
  vim.api.nvim_win_set_cursor(0, { 17, 8 })
  vim.cmd('HieraProfile')
  local job = h.wait_job('the profile job to end', 'hiera-job-1', { done = true, timeout = 30000 })
  check_eq('the job is "Profile Model"', job.title, 'Profile Model')
  check_eq('its end message', job.end_message, 'Model: 0.1 ms (p10-p90 0.095-0.11 ms) on Fake GPU')

  -- :HieraReport opens the report file the job wrote.
  vim.cmd('HieraReport')
  local report = vim.api.nvim_buf_get_name(0)
  check('HieraReport opens <runsDir>/<run>/report.md',
    report:find('^' .. vim.pesc(runs) .. '/%d+%-%d+%-07_elementwise_chain%-Model/report%.md$') ~= nil, report)
  check_eq('the buffer holds the file', vim.api.nvim_buf_get_lines(0, 0, -1, false), vim.fn.readfile(report))
  check_eq('two windows: the source and the report', #vim.api.nvim_list_wins(), 2)
  vim.cmd('HieraReport')
  check_eq('HieraReport again reuses the window', #vim.api.nvim_list_wins(), 2)
  vim.cmd('close')

  -- The file gone: the progress in a scratch buffer, with a warning.
  os.remove(report)
  vim.cmd('HieraReport')
  check_eq('without the file: the scratch report', vim.api.nvim_buf_get_name(0), 'hiera://report/hiera-job-1')
  check('and a warning names the file', notes_text():find('is gone; showing the progress', 1, true) ~= nil, notes_text())
  vim.cmd('close')

  -- :HieraSpec: the "Show task spec for Model" action; the plugin opens the file.
  vim.api.nvim_set_current_buf(py)
  vim.api.nvim_win_set_cursor(0, { 17, 8 })
  vim.cmd('HieraSpec')
  local spec = runs .. '/specs/07_elementwise_chain.py.Model.md'
  wait_for('the task spec to open', function() return vim.api.nvim_buf_get_name(0) == spec end)
  check_eq('HieraSpec opens the spec file', vim.api.nvim_buf_get_name(0), spec)
  check_eq('its first line', vim.api.nvim_buf_get_lines(0, 0, 1, false)[1], '# Task spec: 07_elementwise_chain.py::Model')
  vim.cmd('close')

  -- A worker without a GPU and no CPU run asked for: the job stops before it
  -- runs, "no GPU", and the warning says what to set.
  local no_gpu = { fake_worker, '--device', 'none' }
  client.notify('workspace/didChangeConfiguration',
    { settings = { hiera = { worker = { command = no_gpu } } } })
  vim.api.nvim_set_current_buf(py)
  vim.api.nvim_win_set_cursor(0, { 17, 8 })
  local from = #notes + 1
  vim.cmd('HieraProfile')
  local refused = h.wait_job('the refused profile job to end', 'hiera-job-2', { done = true, timeout = 30000 })
  local refusal = 'Model: not started: no GPU: no worker has one (' .. table.concat(no_gpu, ' ') ..
    ' answered without a CUDA device). Profiling and optimizing need a GPU worker: set worker.command to one (e.g. ' ..
    '["ssh://gpu-host"], a host with a GPU and hiera installed) or list several in worker.specs ' ..
    '(["ssh://gpu-host", "slurm:gpu,gres=gpu:1"]); or ask for a CPU run with worker.device: "cpu" ' ..
    '(PyTorch-operator candidates only, timed on the CPU)'
  check_eq('the refused job ends with what to set', refused.end_message, refusal)
  wait_for('the refusal shown', function()
    for i = from, #notes do
      if notes[i].msg == 'hiera: Profile Model: ' .. refusal then return true end
    end
    return false
  end)
  -- The server's warning and the progress's end carry the same text; both are warnings, in either order.
  local levels = {}
  for i = from, #notes do
    if notes[i].msg == 'hiera: Profile Model: ' .. refusal then table.insert(levels, notes[i].level) end
  end
  check_eq('shown as a warning through vim.notify', table.concat(levels, ','),
    table.concat(vim.tbl_map(function() return vim.log.levels.WARN end, levels), ','))
  check('shown at least once', #levels >= 1)
  from = #notes + 1
  vim.cmd('HieraStatus')
  local status
  wait_for('the HieraStatus table', function()
    for i = from, #notes do
      if notes[i].msg:find('hiera jobs:', 1, true) then status = notes[i].msg end
    end
    return status ~= nil
  end)
  check('HieraStatus lists hiera-job-2 as no GPU', status:find('hiera%-job%-2%s+Profile Model%s+no GPU%s+') ~= nil, status)

  h.stop()
end

h.main('nvim plugin e2e against hiera lsp', 90, run)
