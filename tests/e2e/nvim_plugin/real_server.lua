-- The Neovim plugin against the real `hiera lsp` (HIERA_BIN), with
-- hiera-fake-worker (HIERA_FAKE_WORKER: canned answers, no GPU) as its worker,
-- on a copy of samples/fusion/07_elementwise_chain.py: :HieraProfile runs the
-- server's "Profile Model.forward" action, :HieraReport opens the report file
-- hiera.jobs names for the job, :HieraSpec opens the task spec the server
-- wrote (Neovim 0.7 takes no window/showDocument: the plugin opens it).
--
--   HIERA_TEST_LSP=… HIERA_BIN=build/dev/bin/hiera HIERA_FAKE_WORKER=build/dev/bin/hiera-fake-worker \
--     sh tests/e2e/nvim/headless.sh tests/e2e/nvim_plugin/real_server.lua

local script_dir = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local repo = vim.fn.fnamemodify(script_dir .. '/../../..', ':p'):gsub('/$', '')
local hiera_bin = os.getenv('HIERA_BIN')
local fake_worker = os.getenv('HIERA_FAKE_WORKER')

local tap = dofile(script_dir .. '/../nvim/tap.lua')
local out, fail, check, check_eq, wait_for = tap.out, tap.fail, tap.check, tap.check_eq, tap.wait_for

local notes = {}
vim.notify = function(msg, level) table.insert(notes, { msg = msg, level = level }) end
local function notes_text() return vim.inspect(vim.tbl_map(function(n) return n.msg end, notes)) end

local dir = vim.fn.tempname()
local client_id

local function run()
  if not hiera_bin or hiera_bin == '' or not fake_worker or fake_worker == '' then
    out('ok - SKIP: HIERA_BIN or HIERA_FAKE_WORKER is not set')
    return
  end
  vim.g.loaded_python3_provider = 0
  vim.cmd('filetype on')
  vim.cmd('set runtimepath+=' .. vim.fn.fnameescape(repo .. '/editors/nvim'))
  vim.fn.mkdir(dir, 'p')
  local file = dir .. '/07_elementwise_chain.py'
  vim.fn.writefile(vim.fn.readfile(repo .. '/samples/fusion/07_elementwise_chain.py'), file)
  local runs = dir .. '/runs'

  local progress = require('hiera.progress')
  require('hiera').setup({
    cmd = { hiera_bin, 'lsp' },
    settings = { worker = { command = { fake_worker } }, runsDir = runs },
  })
  vim.cmd('silent edit ' .. vim.fn.fnameescape(file))
  local py = vim.api.nvim_get_current_buf()
  wait_for('the client to attach', function() return #require('hiera.util').clients(py) > 0 end)
  client_id = require('hiera.util').clients(py)[1].id

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
  local client = vim.lsp.get_client_by_id(client_id)
  check('showMessage goes to the plugin', client.handlers['window/showMessage'] == require('hiera').show_message)
  require('hiera').show_message(nil, { type = 2, message = 'hiera: settings: gpu: unknown GPU "x"' }, { client_id = client_id })
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
  if not vim.wait(30000, function()
    local job = progress.find('hiera-job-1')
    return job ~= nil and job.done
  end, 10) then fail('the profile job to end', notes_text() .. vim.inspect(progress.jobs)) end
  if not progress.find('hiera-job-1') then fail('no job', notes_text()) end
  check_eq('the job is "Profile Model"', progress.find('hiera-job-1').title, 'Profile Model')
  check_eq('its end message', progress.find('hiera-job-1').end_message, 'Model: 0.1 ms (p10-p90 0.095-0.11 ms) on Fake GPU')

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
  vim.lsp.get_client_by_id(client_id).notify('workspace/didChangeConfiguration',
    { settings = { hiera = { worker = { command = no_gpu } } } })
  vim.api.nvim_set_current_buf(py)
  vim.api.nvim_win_set_cursor(0, { 17, 8 })
  local from = #notes + 1
  vim.cmd('HieraProfile')
  if not vim.wait(30000, function()
    local job = progress.find('hiera-job-2')
    return job ~= nil and job.done
  end, 10) then fail('the refused profile job to end', notes_text() .. vim.inspect(progress.jobs)) end
  local refusal = 'Model: not started: no GPU: no worker has one (' .. table.concat(no_gpu, ' ') ..
    ' answered without a CUDA device). Profiling and optimizing need a GPU worker: set worker.command to one (e.g. ' ..
    '["ssh://gpu-host"], a host with a GPU and hiera installed) or list several in worker.specs ' ..
    '(["ssh://gpu-host", "slurm:gpu,gres=gpu:1"]); or ask for a CPU run with worker.device: "cpu" ' ..
    '(PyTorch-operator candidates only, timed on the CPU)'
  check_eq('the refused job ends with what to set', progress.find('hiera-job-2').end_message, refusal)
  wait_for('the refusal shown', function()
    for i = from, #notes do
      if notes[i].msg == 'hiera: Profile Model: ' .. refusal then return true end
    end
    return false
  end)
  local shown
  for i = from, #notes do
    if notes[i].msg == 'hiera: Profile Model: ' .. refusal then shown = notes[i] end
  end
  check_eq('shown as a warning through vim.notify', shown.level, vim.log.levels.WARN)
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

  vim.lsp.stop_client(client_id)
  wait_for('the server to stop', function() return vim.lsp.get_client_by_id(client_id) == nil end)
end

tap.main('nvim plugin e2e against hiera lsp', 90, run, function(ok)
  vim.fn.delete(dir, 'rf')
  if not ok and client_id and vim.lsp.get_client_by_id(client_id) then vim.lsp.stop_client(client_id, true) end
end)
