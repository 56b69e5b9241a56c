-- End-to-end test of the Neovim plugin (editors/nvim) on Neovim 0.7+ against
-- hiera-test-lsp, as a user drives it: require('hiera').setup{}, opening a
-- .cu and a .py file, hover, :HieraOptimize / :HieraProfile running a code
-- action end to end with the edit applied, progress through vim.notify and
-- the chained $/progress handler, :HieraStatus, :HieraCancel, :HieraReport.
--
--   HIERA_TEST_LSP=build/test/bin/hiera-test-lsp sh tests/e2e/nvim_plugin/run.sh
--
-- Prints one "ok N - what" line per check and exits 0, or prints
-- "not ok N - what: why" and exits 1 on the first failure.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/../nvim/harness.lua')
local fail, check, check_eq, wait_for = h.fail, h.check, h.check_eq, h.wait_for
local notes, note_index, wait_note, notes_text = h.notes, h.note_index, h.wait_note, h.notes_text
local first_line, hiera_clients = h.first_line, h.hiera_clients
local server = os.getenv('HIERA_TEST_LSP')

-- The version Neovim sent for the buffer (0.11 deprecates util.buf_versions: it is changedtick).
local function buf_version(bufnr)
  if vim.fn.has('nvim-0.11') == 1 then return vim.b[bufnr].changedtick end
  return vim.lsp.util.buf_versions[bufnr]
end

local function run()
  if not server or server == '' then fail('setup', 'HIERA_TEST_LSP is not set') end
  h.setup_editor({ plugin = true })

  -- lsp/hiera.lua: the 0.11+ config table; loading it starts nothing, even on 0.7.
  local lsp_config = dofile(h.plugin_dir .. '/lsp/hiera.lua')
  check('lsp/hiera.lua loads as a table', type(lsp_config) == 'table', type(lsp_config))
  check_eq('lsp/hiera.lua cmd', lsp_config.cmd, { 'hiera', 'lsp' })
  check_eq('lsp/hiera.lua filetypes', lsp_config.filetypes, { 'cuda', 'python' })
  check('lsp/hiera.lua root_markers and a $/progress handler',
    type(lsp_config.root_markers) == 'table' and #lsp_config.root_markers > 0
      and type(lsp_config.handlers['$/progress']) == 'function')

  -- plugin/hiera.lua defines the commands and starts nothing.
  vim.cmd('runtime plugin/hiera.lua')
  check('plugin/hiera.lua defines the user commands', vim.fn.exists(':HieraOptimize') == 2
    and vim.fn.exists(':HieraProfile') == 2 and vim.fn.exists(':HieraCancel') == 2
    and vim.fn.exists(':HieraStatus') == 2 and vim.fn.exists(':HieraReport') == 2 and vim.fn.exists(':HieraSpec') == 2)
  check_eq('no client before setup', #hiera_clients(nil), 0)
  local before = #notes
  vim.cmd('HieraStatus')
  check('HieraStatus without a server says so', note_index('no hiera language server is running', before + 1) ~= nil,
    notes_text())

  -- Another $/progress consumer (as fidget.nvim or a statusline installs):
  -- the plugin's handler must pass every notification on to it.
  local chained = 0
  local default_progress = vim.lsp.handlers['$/progress']
  vim.lsp.handlers['$/progress'] = function(...)
    chained = chained + 1
    return default_progress(...)
  end

  -- vim.ui.select, answered by the test.
  local selects = {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(selects, { items = items, opts = opts })
    on_choice(items[1], 1)
  end

  local user_attached
  local hiera = require('hiera')
  h.setup_plugin({
    cmd = { server },
    actions = { optimize = 'run test job' },
    settings = { answer = 42 },
    -- The user's on_attach runs after the plugin's: its K wins.
    on_attach = function(_, bufnr)
      user_attached = bufnr
      vim.keymap.set('n', 'K', '<Cmd>echo "mine"<CR>', { buffer = bufnr })
    end,
  })
  check('setup returns the module', hiera.optimize ~= nil)

  -- CUDA file: the client starts and attaches.
  local cu = h.edit(h.fixtures .. '/vector_add.cu')
  check_eq('filetype of the .cu buffer', vim.bo[cu].filetype, 'cuda')
  local client = h.wait_attached(cu, notes_text)
  check_eq('one hiera client attached to the .cu buffer', #hiera_clients(cu), 1)
  check('the server answered initialize', client.initialized)
  wait_for('the user on_attach', function() return user_attached == cu end)
  check_eq("the user's on_attach maps K over the plugin's hover", vim.fn.maparg('K', 'n'), '<Cmd>echo "mine"<CR>')
  check_eq('cmd from setup', client.config.cmd, { server })
  check_eq('settings as initializationOptions', client.config.init_options, { answer = 42 })
  check_eq('settings for workspace/configuration (section hiera)', client.config.settings, { hiera = { answer = 42 } })
  local root = client.config.root_dir
  check('root_dir contains the file', type(root) == 'string' and (h.fixtures .. '/'):sub(1, #root + 1) == root .. '/',
    tostring(root))

  -- Python file: the same client (same root), attached too.
  local py = h.edit(h.fixtures .. '/model.py', { hide = true })
  check_eq('filetype of the .py buffer', vim.bo[py].filetype, 'python')
  local py_clients = hiera_clients(py)
  check('the same client attached to the .py buffer', #py_clients == 1 and py_clients[1].id == h.client_id,
    vim.inspect(vim.tbl_map(function(c) return c.id end, py_clients)))
  check_eq('still one hiera client', #hiera_clients(nil), 1)

  -- Hover, through Neovim's request API.
  local function hover(bufnr, row, col)
    local result = h.hover(bufnr, row, col)
    if not result then fail('hover', 'no result') end
    return result.contents.value
  end
  check_eq('hover in the .py buffer', hover(py, 13, 9), '`forward` at line 12, column 8 (utf-16)')
  check_eq('hover in the .cu buffer (after CJK and emoji)', hover(cu, 5, 25), '`idx` at line 4, column 18 (utf-16)')

  -- :HieraOptimize: code action at the cursor → executeCommand → job →
  -- $/progress → workspace/applyEdit applied by Neovim's default handler.
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  local from = #notes + 1
  vim.cmd('HieraOptimize')
  wait_for('the job edit in the .cu buffer', function() return first_line(cu) == '// hiera-test: job done' end)
  check_eq('HieraOptimize: the job comment is the first line', first_line(cu), '// hiera-test: job done')
  check_eq('the old first line moved down', vim.api.nvim_buf_get_lines(cu, 1, 2, false)[1],
    '// Vector addition: c = a + b, one thread per element.')
  local begin_note = wait_note('the begin notification', 'hiera: hiera test job: started', from)
  local end_note = wait_note('the end notification', 'hiera: hiera test job: done', from)
  check('vim.notify on begin and end', note_index('hiera: hiera test job: started', from)
    < note_index('hiera: hiera test job: done', from), notes_text())
  check_eq('notify levels', { begin_note.level, end_note.level }, { vim.log.levels.INFO, vim.log.levels.INFO })
  check('no other job notification than begin and end',
    #vim.tbl_filter(function(n) return n.msg:find('hiera test job', 1, true) ~= nil end, { unpack(notes, from) }) == 2,
    notes_text())
  check_eq('the command answered with the job id', require('hiera.commands').last_job, 'hiera-job-1')
  check('the progress reached the previously installed $/progress handler (7 values)', chained >= 7,
    'chained ' .. chained)
  if client.messages and client.messages.progress then
    check_eq("Neovim's own progress state saw the end", client.messages.progress['hiera-job-1'].done, true)
  end

  -- :HieraStatus: the finished job.
  from = #notes + 1
  vim.cmd('HieraStatus')
  local status = wait_note('HieraStatus', 'hiera jobs:', from).msg
  check('HieraStatus lists hiera-job-1 as done', status:find('hiera%-job%-1%s+hiera test job%s+done%s+done') ~= nil,
    status)
  check('HieraStatus has a header row', status:find('id%s+title%s+state%s+message') ~= nil, status)

  -- :HieraReport: the last job's report in a scratch buffer.
  vim.cmd('HieraReport')
  local report = vim.api.nvim_get_current_buf()
  check_eq('HieraReport opens the report buffer', vim.api.nvim_buf_get_name(report), 'hiera://report/hiera-job-1')
  local lines = vim.api.nvim_buf_get_lines(report, 0, -1, false)
  check_eq('the report names the job', lines[1], 'hiera job hiera-job-1: hiera test job')
  check('the report has the end message and the steps',
    vim.tbl_contains(lines, '  done') and vim.tbl_contains(lines, '  report step 5/5 (100%)')
      and vim.tbl_contains(lines, '  end    done'), vim.inspect(lines))
  check('the report buffer is a scratch buffer', vim.bo[report].buftype == 'nofile' and not vim.bo[report].modifiable)
  from = #notes + 1
  vim.cmd('HieraOptimize')
  check('HieraOptimize where no server is attached says so',
    note_index('no hiera language server is attached', from) ~= nil, notes_text())
  vim.cmd('close')

  -- :HieraCancel (no argument: every job) on a long job.
  local progress = require('hiera.progress')
  local function start_long_job()
    vim.api.nvim_win_set_buf(0, py)
    -- Straight to the server, as any other plugin could (vim.lsp.buf.execute_command is deprecated in 0.11).
    require('hiera.util').request(client, 'workspace/executeCommand', {
      command = 'hiera.test.slowJob',
      arguments = { { uri = vim.uri_from_bufnr(py), version = buf_version(py), steps = 100, stepMs = 100 } },
    }, function() end, py)
    wait_for('the long job to report', function()
      local running = progress.running()
      return #running == 1 and #progress.find(running[1]).entries >= 2
    end)
    return progress.running()[1]
  end
  local long = start_long_job()
  check_eq('a long job is running', long, 'hiera-job-2')
  from = #notes + 1
  vim.cmd('HieraCancel')
  wait_for('the end of the cancelled job', function() return progress.find(long).done end)
  check_eq('HieraCancel: the job ends "cancelled"', progress.find(long).end_message, 'cancelled')
  check('it stopped early', #progress.find(long).entries < 20, #progress.find(long).entries .. ' progress values')
  local cancelled_note = wait_note('the cancelled notification', 'hiera: hiera test job: cancelled', from)
  check_eq('the cancelled notification is a warning', cancelled_note.level, vim.log.levels.WARN)
  wait_note('HieraCancel answer', 'hiera: cancelled 1 job', from)
  check('HieraCancel reports the count', note_index('hiera: cancelled 1 job', from) ~= nil, notes_text())

  -- :HieraCancel <id>.
  local second = start_long_job()
  from = #notes + 1
  vim.cmd('HieraCancel ' .. second)
  wait_for('the end of ' .. second, function() return progress.find(second).done end)
  check_eq('HieraCancel ' .. second .. ' ends it "cancelled"', progress.find(second).end_message, 'cancelled')
  wait_note('HieraCancel <id> answer', 'hiera: cancelled 1 job', from)
  check('HieraCancel <id> reports the count', note_index('hiera: cancelled 1 job', from) ~= nil, notes_text())
  from = #notes + 1
  vim.cmd('HieraCancel hiera-job-99')
  local refused = wait_note('HieraCancel of an unknown job', 'no running job hiera-job-99', from)
  check_eq('HieraCancel of an unknown job is an error', refused.level, vim.log.levels.ERROR)
  vim.wait(300)
  check_eq('the python buffer is unchanged by the cancelled jobs', first_line(py), 'import torch')

  from = #notes + 1
  vim.cmd('HieraStatus')
  status = wait_note('HieraStatus after cancelling', 'hiera jobs:', from).msg
  check('HieraStatus shows both cancelled jobs',
    status:find('hiera%-job%-2%s+hiera test job%s+cancelled%s+cancelled') ~= nil
      and status:find('hiera%-job%-3%s+hiera test job%s+cancelled%s+cancelled') ~= nil, status)

  vim.cmd('HieraReport')
  report = vim.api.nvim_get_current_buf()
  check_eq('HieraReport shows the last job', vim.api.nvim_buf_get_name(report), 'hiera://report/' .. second)
  lines = vim.api.nvim_buf_get_lines(report, 0, -1, false)
  check('its report says cancelled', vim.tbl_contains(lines, '  cancelled') and vim.tbl_contains(lines, 'state: finished'),
    vim.inspect(lines))
  vim.cmd('close')
  vim.cmd('HieraReport hiera-job-1')
  check_eq('HieraReport <id> shows that job', vim.api.nvim_buf_get_name(0), 'hiera://report/hiera-job-1')
  vim.cmd('close')

  -- :HieraProfile: the test server offers no "Profile" action, so the user
  -- picks among the hiera.* actions offered (vim.ui.select), here in the .py file.
  vim.api.nvim_win_set_buf(0, py)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.cmd('HieraProfile')
  wait_for('vim.ui.select', function() return #selects == 1 end)
  check_eq('HieraProfile offers the hiera.* actions', vim.tbl_map(function(a) return a.title end, selects[1].items),
    { 'hiera-test: run test job' })
  check('the prompt names the pattern', selects[1].opts.prompt:find('^Profile', 1, true) ~= nil, selects[1].opts.prompt)
  check_eq('format_item shows the title', selects[1].opts.format_item(selects[1].items[1]), 'hiera-test: run test job')
  wait_for('the job edit in the .py buffer', function() return first_line(py) == '# hiera-test: job done' end)
  check_eq('HieraProfile: the chosen action ran end to end', first_line(py), '# hiera-test: job done')
  h.wait_job('the end of the fourth job', 'hiera-job-4', { done = true })
  check_eq('the fourth job succeeded', progress.find('hiera-job-4').end_message, 'done')

  -- Shutdown.
  check_eq('server exit code after shutdown/exit', h.stop(), 0)
end

h.main('nvim plugin e2e', 60, run)
