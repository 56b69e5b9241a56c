-- End-to-end test with Neovim's own LSP client (0.7+) against hiera-test-lsp.
--
--   HIERA_TEST_LSP=build/tests/e2e/hiera-test-lsp \
--     nvim --headless --clean -c 'luafile tests/e2e/nvim/run.lua'
--
-- Prints one "ok N - what" line per check and exits 0, or prints
-- "not ok N - what: why" and exits 1 on the first failure.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/harness.lua')
local fail, check, check_eq, wait_for = h.fail, h.check, h.check_eq, h.wait_for
local server = os.getenv('HIERA_TEST_LSP')

-- What the server sent, recorded by handlers that wrap Neovim's defaults.
local events = { progress = {}, apply_edit = {}, create = {}, show_message = {} }

local function wrap(method, list)
  return function(err, result, ctx, config)
    table.insert(list, result)
    local default = vim.lsp.handlers[method]
    if default then return default(err, result, ctx, config) end
    return vim.NIL
  end
end

local function progress_of(token)
  local values = {}
  for _, p in ipairs(events.progress) do
    if p.token == token then table.insert(values, p.value) end
  end
  return values
end

local function progress_end(token)
  for _, v in ipairs(progress_of(token)) do
    if v.kind == 'end' then return v end
  end
  return nil
end

-- Neovim's apply_text_edits annotates the edit tables it applies (_index); compare the LSP fields.
local function lsp_edits(edits)
  return vim.tbl_map(function(e) return { range = e.range, newText = e.newText } end, edits or {})
end

local function text_document(bufnr)
  return { uri = vim.uri_from_bufnr(bufnr) }
end

local function open(path)
  local bufnr = h.edit(path, { hide = true })
  check('attach ' .. vim.fn.fnamemodify(path, ':t'), vim.lsp.buf_attach_client(bufnr, h.client_id))
  return bufnr
end

local function run()
  if not server or server == '' then fail('setup', 'HIERA_TEST_LSP is not set') end
  h.setup_editor()

  local client = h.start_client({
    name = 'hiera-test',
    cmd = { server },
    root_dir = h.fixtures,
    handlers = {
      ['$/progress'] = wrap('$/progress', events.progress),
      ['workspace/applyEdit'] = wrap('workspace/applyEdit', events.apply_edit),
      ['window/workDoneProgress/create'] = wrap('window/workDoneProgress/create', events.create),
      ['window/showMessage'] = function(_, result) table.insert(events.show_message, result) end,
    },
  })
  local caps = client.server_capabilities
  check_eq('server commands', caps.executeCommandProvider.commands,
    { 'hiera.cancelJob', 'hiera.jobs', 'hiera.test.slowJob', 'hiera.test.block' })
  check_eq('position encoding (Neovim 0.7 speaks UTF-16)', caps.positionEncoding, 'utf-16')
  check_eq('incremental sync', caps.textDocumentSync.change, 2)

  -- CUDA file ---------------------------------------------------------------
  local cu = open(h.fixtures .. '/vector_add.cu')
  check_eq('filetype of the .cu buffer', vim.bo[cu].filetype, 'cuda')
  h.wait_diagnostics(cu, 1)
  local d = vim.diagnostic.get(cu)[1]
  check_eq('TODO diagnostic', { d.lnum, d.col, d.end_lnum, d.end_col, d.severity, d.message, d.source },
    { 5, 45, 5, 49, vim.diagnostic.severity.WARN, 'TODO found', 'hiera-test' })

  -- Line 5 (row 5, 0-based line 4): '  /* 索引 😀 */ int idx = ...'; "idx" is at
  -- byte 24, UTF-16 column 18.
  local hover, params = h.hover(cu, 5, 25)
  check_eq('hover position sent in UTF-16', params.position, { line = 4, character = 19 })
  check_eq('hover on idx after CJK and emoji', hover, {
    contents = { kind = 'markdown', value = '`idx` at line 4, column 18 (utf-16)' },
    range = { start = { line = 4, character = 18 }, ['end'] = { line = 4, character = 21 } },
  })
  -- An edit on the multi-byte line reaches the server as an incremental change.
  vim.api.nvim_buf_set_text(cu, 4, 20, 4, 20, { 'const ' })
  local moved = h.hover(cu, 5, 31)
  check_eq('hover after an incremental edit', moved.contents.value, '`idx` at line 4, column 24 (utf-16)')

  local lenses = h.request(cu, 'textDocument/codeLens', { textDocument = text_document(cu) })
  check_eq('code lens', lenses, {
    { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } },
      command = { title = 'hiera-test: 13 lines', command = 'hiera.jobs', arguments = {} } },
  })

  local actions = h.code_actions(cu, 1, 0)
  check_eq('code action titles', h.titles(actions), { 'hiera-test: run test job', 'hiera-test: insert header comment' })
  local job_command = actions[1].command
  check_eq('the job action carries the buffer version', job_command.arguments[1].version, vim.lsp.util.buf_versions[cu])

  -- The job: progress, then Neovim's default applyEdit handler edits the buffer.
  local reply = h.request(cu, 'workspace/executeCommand', { command = job_command.command, arguments = job_command.arguments })
  check_eq('executeCommand returns the job id', reply, { jobId = 'hiera-job-1' })
  local job = reply.jobId
  wait_for('the end of ' .. job, function() return progress_end(job) ~= nil end)
  check_eq('progress token created', events.create, { { token = job } })
  local kinds = vim.tbl_map(function(v) return (v.kind or '?') .. ':' .. (v.message or '') end, progress_of(job))
  check_eq('progress sequence', kinds, {
    'begin:started', 'report:step 1/5', 'report:step 2/5', 'report:step 3/5', 'report:step 4/5', 'report:step 5/5',
    'end:done',
  })
  check_eq('the last report is at 100%', progress_of(job)[6].percentage, 100)
  check_eq('Neovim recorded the progress as done', client.messages.progress[job].done, true)
  check_eq('one workspace/applyEdit', #events.apply_edit, 1)
  local uri = vim.uri_from_bufnr(cu)
  check_eq('the edit (changes form: Neovim 0.7 has no documentChanges)', lsp_edits(events.apply_edit[1].edit.changes[uri]), {
    { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } },
      newText = '// hiera-test: job done\n' },
  })
  check_eq('the buffer starts with the job comment', h.first_line(cu), '// hiera-test: job done')
  check_eq('the old first line moved down', vim.api.nvim_buf_get_lines(cu, 1, 2, false)[1],
    '// Vector addition: c = a + b, one thread per element.')
  local after = h.request(cu, 'textDocument/codeLens', { textDocument = text_document(cu) })
  check_eq('the server saw the edited buffer', after[1].command.title, 'hiera-test: 14 lines')

  -- Python file -------------------------------------------------------------
  local py = open(h.fixtures .. '/model.py')
  check_eq('filetype of the .py buffer', vim.bo[py].filetype, 'python')
  local forward = h.hover(py, 13, 9)
  check_eq('hover on forward', forward.contents.value, '`forward` at line 12, column 8 (utf-16)')

  -- Cancel a long job from the client.
  local long = h.request(py, 'workspace/executeCommand', {
    command = 'hiera.test.slowJob',
    arguments = { { uri = vim.uri_from_bufnr(py), version = vim.lsp.util.buf_versions[py], steps = 50, stepMs = 100 } },
  })
  check_eq('second job id', long.jobId, 'hiera-job-2')
  wait_for('a progress report', function() return #progress_of(long.jobId) >= 2 end)
  client.notify('window/workDoneProgress/cancel', { token = long.jobId })
  wait_for('the end of the cancelled job', function() return progress_end(long.jobId) ~= nil end)
  check_eq('progress ends "cancelled"', progress_end(long.jobId).message, 'cancelled')
  check('it stopped early', #progress_of(long.jobId) < 50, #progress_of(long.jobId) .. ' progress values')
  vim.wait(300)
  check_eq('no applyEdit for the cancelled job', #events.apply_edit, 1)
  check_eq('the python buffer is unchanged', h.first_line(py), 'import torch')

  -- codeAction/resolve, applied with Neovim's workspace edit code.
  local py_actions = h.code_actions(py, 1, 0)
  local header = py_actions[2]
  check_eq('header action title', header.title, 'hiera-test: insert header comment')
  check_eq('no edit before resolve (Neovim declares resolveSupport)', header.edit, nil)
  local resolved = h.request(py, 'codeAction/resolve', header)
  check_eq('resolved edit', lsp_edits(resolved.edit.changes[vim.uri_from_bufnr(py)]), {
    { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } },
      newText = '# hiera-test: header\n' },
  })
  vim.lsp.util.apply_workspace_edit(resolved.edit, client.offset_encoding)
  check_eq('the python buffer starts with the header', h.first_line(py), '# hiera-test: header')
  local shifted = h.hover(py, 14, 9)
  check_eq('the server saw the header line', shifted.contents.value, '`forward` at line 13, column 8 (utf-16)')

  -- Shutdown and exit ---------------------------------------------------------
  check_eq('server exit code after shutdown/exit', h.stop(), 0)
end

h.main('nvim e2e', 90, run)
