-- The real `hiera lsp` in Neovim 0.7+, through the editors/nvim plugin
-- (require('hiera').setup{}): hint diagnostics, hover, code lenses, code
-- actions and a quick fix on a .cu buffer; on a KernelBench .py buffer,
-- :HieraOptimize end to end (the real `hiera worker` on CPU torch, an
-- OpenAI-compatible LLM served on loopback from this Neovim's own event loop,
-- the edit applied to the buffer by Neovim's workspace/applyEdit handler) and
-- :HieraCancel of a running optimize job.
--
--   HIERA_BIN=build/dev/bin/hiera sh tests/e2e/nvim_features/run.sh
--
-- Prints one "ok N - what" line per check and exits 0, or prints
-- "not ok N - what: why" and exits 1 on the first failure. The fixtures are
-- copied to a scratch folder (buffers and runs live there) and never written.

local h = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/../nvim/harness.lua')
local fail, check, check_eq, wait_for = h.fail, h.check, h.check_eq, h.wait_for
local request, at, hover, code_actions, titles = h.request, h.at, h.hover, h.code_actions, h.titles
local read, printed = h.read, h.printed
local optimize_fixtures = h.repo .. '/tests/fixtures/optimize'
local hiera_bin = os.getenv('HIERA_BIN')
-- An optimize job on the CPU worker takes seconds to tens of seconds on a busy machine.
local JOB_MS = 90000

-- An OpenAI-compatible endpoint on 127.0.0.1 served by libuv in this
-- process: every POST gets `reply` (a chat.completion JSON text); with
-- `llm.hold` set the answers wait in `llm.pending` until release().
local function start_llm(reply)
  local llm = { requests = {}, hold = false, pending = {} }
  local server = vim.loop.new_tcp()
  assert(server:bind('127.0.0.1', 0))
  assert(server:listen(16, function(listen_err)
    if listen_err then return end
    local socket = vim.loop.new_tcp()
    server:accept(socket)
    local buffer = ''
    socket:read_start(function(err, chunk)
      if err or not chunk then
        if not socket:is_closing() then socket:close() end
        return
      end
      buffer = buffer .. chunk
      local head_end = buffer:find('\r\n\r\n', 1, true)
      if not head_end then return end
      local length = tonumber(buffer:sub(1, head_end):lower():match('content%-length:%s*(%d+)')) or 0
      if #buffer < head_end + 3 + length then return end
      socket:read_stop()
      table.insert(llm.requests, { line = buffer:match('^[^\r]*'), body = buffer:sub(head_end + 4, head_end + 3 + length) })
      local function answer()
        if socket:is_closing() then return end
        socket:write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ' .. #reply ..
          '\r\n\r\n' .. reply, function() if not socket:is_closing() then socket:close() end end)
      end
      if llm.hold then table.insert(llm.pending, answer) else answer() end
    end)
  end))
  llm.url = 'http://127.0.0.1:' .. server:getsockname().port
  function llm.release()
    llm.hold = false
    for _, answer in ipairs(llm.pending) do answer() end
    llm.pending = {}
  end
  function llm.close() if not server:is_closing() then server:close() end end
  return llm
end

local function split(text)
  local list = vim.split(text, '\n', { plain = true })
  if list[#list] == '' then table.remove(list) end
  return list
end

local function slice(list, from, to)
  local out_list = {}
  for i = from, to or #list do table.insert(out_list, list[i]) end
  return out_list
end

local llm

local function diagnostic_fields(bufnr)
  return vim.tbl_map(function(d) return { d.lnum, d.col, d.end_lnum, d.end_col, d.severity, d.code, d.message } end,
    vim.diagnostic.get(bufnr))
end

local function run()
  if not hiera_bin or hiera_bin == '' then fail('setup', 'HIERA_BIN is not set') end
  h.setup_editor({ plugin = true })
  local scratch = h.scratch()
  h.copy(h.fixtures .. '/saxpy.cu', scratch .. '/saxpy.cu')
  local row_loop = read(optimize_fixtures .. '/row_loop_mlp.py')
  h.write(scratch .. '/row_loop_mlp.py', row_loop)

  local correct = read(optimize_fixtures .. '/replies/correct.py')
  llm = start_llm(vim.fn.json_encode({
    id = 'chatcmpl-test', object = 'chat.completion',
    choices = { { index = 0, finish_reason = 'stop',
                  message = { role = 'assistant', content = 'One batched linear layer:\n\n```python\n' .. correct .. '```\n' } } },
    usage = { prompt_tokens = 1000, completion_tokens = 200, total_tokens = 1200 },
  }))

  -- The settings that run the optimizer on the CPU worker with one candidate from the LLM above.
  h.setup_plugin({
    cmd = { hiera_bin, 'lsp' },
    settings = {
      gpu = 'h200',
      worker = { command = { hiera_bin, 'worker' }, device = 'cpu' },  -- a CPU run, asked for: else jobs need a GPU worker
      llm = { endpoint = llm.url, model = 'scripted-model', maxRetries = 0 },
      budget = { candidates = 1, minutes = 2 },
      runsDir = scratch .. '/runs',
    },
  })

  -- CUDA ----------------------------------------------------------------------
  local cu = h.edit(scratch .. '/saxpy.cu')
  local client = h.wait_attached(cu)
  check('hiera lsp attached to the .cu buffer', client.initialized)
  check_eq('its commands', client.server_capabilities.executeCommandProvider.commands,
    { 'hiera.cancelJob', 'hiera.jobs', 'hiera.optimizeSymbol', 'hiera.profileSymbol', 'hiera.showSpec', 'hiera.explainHint' })

  local warn, info = vim.diagnostic.severity.WARN, vim.diagnostic.severity.INFO
  h.wait_diagnostics(cu, 2)
  check_eq('the hint diagnostics of saxpy.cu', diagnostic_fields(cu), {
    { 5, 38, 5, 46, info, 'cuda.missing_restrict', "'x' is only read in 'saxpy': declare it const and __restrict__" },
    { 11, 26, 11, 29, warn, 'cuda.block_size', 'block of 100 threads is not a multiple of 32: its last warp runs 4 of 32 lanes' },
  })

  local estimate = '**Estimate** on H200: 3.00 µs, launch-bound (at least 3.00 µs a launch; 2.62 µs at speed of light) · 2.1 MFLOP, 12.6 MB (shapes from annotations)'
  check_eq('hover on the kernel', (hover(cu, 6, 18)), {
    contents = { kind = 'markdown', value = '### kernel `saxpy`\n\n' .. estimate .. '\n\nNot measured yet: run *Profile kernel saxpy*.\n' },
    range = { start = { line = 5, character = 16 }, ['end'] = { line = 5, character = 21 } },
  })

  -- Neovim's own code lens machinery: refresh, then what it stored for the buffer.
  vim.lsp.codelens.refresh()
  wait_for('code lenses of saxpy.cu', function() return #vim.lsp.codelens.get(cu) == 1 end)
  local lens = vim.lsp.codelens.get(cu)[1]
  check_eq('the kernel code lens', { lens.range.start.line, lens.command.title, lens.command.command },
    { 5, 'est. 3.00 µs on H200 (launch-bound)', 'hiera.profileSymbol' })

  local actions = code_actions(cu, 6, 40)
  check_eq('code actions on `float* x`', titles(actions), {
    'Declare `float* x` const __restrict__', 'Explain hint cuda.missing_restrict', 'Optimize kernel saxpy',
    'Profile kernel saxpy', 'Show task spec for saxpy', 'Add launch contract',
  })
  local fix = request(cu, 'codeAction/resolve', actions[1])
  vim.lsp.util.apply_workspace_edit(fix.edit, client.offset_encoding)
  check_eq('the quick fix applied to the buffer', vim.api.nvim_buf_get_lines(cu, 5, 6, false)[1],
    '__global__ void saxpy(int n, float a, const float* __restrict__ x, float* y) {')
  h.wait_diagnostics(cu, 1, 'the fixed hint to go')
  check_eq('only the block size hint is left', vim.diagnostic.get(cu)[1].code, 'cuda.block_size')

  -- Python ----------------------------------------------------------------------
  local py = h.edit(scratch .. '/row_loop_mlp.py', { hide = true })
  check('the same client attached to the .py buffer', vim.lsp.buf_is_attached(py, h.client_id))
  h.wait_diagnostics(py, 1)
  check_eq('the python loop hint', diagnostic_fields(py), {
    { 14, 15, 14, 79, warn, 'torch.python_loop',
      'Python loop over a tensor in forward runs a matmul per iteration: one batched matmul does them all' },
  })
  check_eq('hover on the module', hover(py, 9, 8).contents.value,
    "### nn.Module `Model`\n\n1 layer · 3 ops in forward\n\nNo estimate: the shapes of forward's inputs are unknown " ..
    "(KernelBench's `get_inputs` gives them).\n\nNot measured yet: run *Profile Model.forward*.\n")
  check_eq('code actions in forward', titles(code_actions(py, 15, 20)), {
    'Explain hint torch.python_loop', 'Optimize Model.forward', 'Profile Model.forward', 'Show task spec for Model',
  })

  -- :HieraOptimize in Model.forward: the job, its progress, and the edit applied to the buffer.
  local progress = require('hiera.progress')
  at(py, 14, 8)
  vim.cmd('HieraOptimize')
  local job = h.wait_job('the end of the optimize job', 'hiera-job-1', { done = true, timeout = JOB_MS })
  check_eq('the job is "Optimize Model"', job.title, 'Optimize Model')
  check('it ends verified faster: ' .. job.end_message,
    job.end_message:find('^Model: %d+%.%d%dx faster on cpu, verified; report: ' .. vim.pesc(scratch) .. '/runs/') ~= nil)
  check('progress reported the LLM step', vim.tbl_contains(vim.tbl_map(function(e) return e.message end, job.entries),
    'S1 / whole module: asking llm:settings for 1 (0/1 tried, 0 verified)'))
  check_eq('the LLM was asked once', #llm.requests, 1)
  check_eq('at /v1/chat/completions', llm.requests[1].line, 'POST /v1/chat/completions HTTP/1.1')
  check('Neovim applied the labelled edit', printed[#printed] ~= nil and
    printed[#printed]:find('^Workspace edit hiera: optimized Model %(%d+%.%d%dx%)$') ~= nil, vim.inspect(printed))

  local original = split(row_loop)
  local now = h.lines(py)
  check_eq('the original Model is intact', slice(now, 1, 16), slice(original, 1, 16))
  check_eq('two blank lines after it', slice(now, 17, 18), { '', '' })
  check('the annotation comment', now[19]:find('^# Optimized by hiera on cpu: %d+%.%d%dx faster than the original, verified%.$')
    and now[20]:find('^# Median .* ms %-> .* ms %(p10%-p90 .*, %d+ timed runs each%)%.$')
    and now[21] == '# Verified on 6 trials within atol 1e-05, rtol 1e-05 (float32); spaces tried: S1; delivered from S1.'
    and now[22]:find('^# Full report: ' .. vim.pesc(scratch) .. '/runs/.*/report%.md$'), vim.inspect(slice(now, 19, 22)))
  check_eq('ModelNew after the comment', slice(now, 23, 30), {
    'class ModelNew(nn.Module):',
    '    def __init__(self, features):',
    '        super().__init__()',
    '        self.linear = nn.Linear(features, features)',
    '',
    '    def forward(self, x):',
    '        # One batched linear layer over all rows, then the ReLU.',
    '        return torch.relu(self.linear(x))',
  })
  check_eq('then the rest of the file, unchanged', slice(now, 31), slice(original, 17))
  check('the buffer is modified, not written', vim.bo[py].modified and read(scratch .. '/row_loop_mlp.py') == row_loop)

  -- The measurement recorded once the edit was applied shows in Model's lens.
  vim.lsp.codelens.refresh()
  wait_for('the measured lens', function()
    local lenses = vim.lsp.codelens.get(py)
    return #lenses >= 1 and lenses[1].command.title:find('verified') ~= nil
  end)
  local measured = vim.lsp.codelens.get(py)[1].command.title
  check('Model\'s lens: measured on cpu, verified faster (' .. measured .. ')',
    measured:find('^[%d.]+ .-s on cpu · verified [%d.]+× faster$') ~= nil)

  -- :HieraCancel while the job waits for the LLM.
  llm.hold = true
  at(py, 14, 8)
  vim.cmd('HieraOptimize')
  wait_for('the second LLM request', function() return #llm.requests == 2 end, JOB_MS)
  check('the second job is running', progress.find('hiera-job-2') ~= nil and not progress.find('hiera-job-2').done)
  vim.cmd('HieraCancel')
  wait_for('the end of the cancelled job', function() return progress.find('hiera-job-2').done end)
  llm.release()
  check_eq('it ends "cancelled"', progress.find('hiera-job-2').end_message, 'cancelled')
  vim.wait(300)
  check_eq('the buffer is unchanged by the cancelled job', h.lines(py), now)

  -- Shutdown.
  check_eq('hiera lsp exit code after shutdown/exit', h.stop(), 0)
end

h.main('nvim features e2e', 240, run, function()
  if llm then llm.close() end
end)
