-- :HieraOptimize, :HieraProfile, :HieraSpec, :HieraCancel, :HieraStatus,
-- :HieraReport, and the Lua functions behind them. Everything goes through the standard
-- LSP requests (textDocument/codeAction, codeAction/resolve,
-- workspace/executeCommand); nothing here waits: answers arrive in callbacks.
local config = require('hiera.config')
local progress = require('hiera.progress')
local util = require('hiera.util')

local M = {}

local levels = vim.log.levels

-- The job id the last command started ({jobId} answer), for the record.
M.last_job = nil

local function first_client(bufnr)
  local clients = util.clients(bufnr)
  if #clients == 0 then
    util.notify('hiera: no hiera language server is attached to this buffer', levels.WARN)
    return nil
  end
  return clients[1]
end

local function err_text(err)
  if type(err) == 'table' then return err.message or vim.inspect(err) end
  return tostring(err)
end

-- The diagnostics of this client on the cursor line, in LSP form, for the
-- code action context.
local function line_diagnostics(bufnr, client, row)
  local ok, ns = pcall(vim.lsp.diagnostic.get_namespace, client.id)
  if not ok then return {} end
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr, { namespace = ns, lnum = row })) do
    local lsp = d.user_data and d.user_data.lsp or {}
    if lsp.range then
      table.insert(out, lsp)
    else
      table.insert(out, vim.tbl_extend('keep', {
        range = { start = { line = d.lnum, character = d.col },
                  ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col } },
        severity = d.severity, message = d.message, source = d.source, code = d.code,
      }, lsp))
    end
  end
  return out
end

-- The Command of a code action, or the action itself when it is a Command.
local function command_of(action)
  if type(action.command) == 'string' then return action end
  return action.command
end

local function run_command(client, command, bufnr, on_done)
  local params = { command = command.command, arguments = command.arguments }
  util.request(client, 'workspace/executeCommand', params, function(err, result)
    if err then
      util.notify(string.format('hiera: %s: %s', command.title or command.command, err_text(err)), levels.ERROR)
    elseif type(result) == 'table' and result.jobId then
      M.last_job = result.jobId
    end
    if on_done then on_done(err, result) end
  end, bufnr)
end

-- Runs a code action: resolves it when the server leaves its edit or
-- command to codeAction/resolve, applies its edit, then executes its command.
function M.execute_action(client, action, bufnr, on_done)
  if type(action.command) ~= 'string' and (action.edit == nil or action.command == nil) and action.data ~= nil then
    local provider = client.server_capabilities and client.server_capabilities.codeActionProvider
    if type(provider) == 'table' and provider.resolveProvider and not action._hiera_resolved then
      util.request(client, 'codeAction/resolve', action, function(err, resolved)
        if err or type(resolved) ~= 'table' then
          util.notify('hiera: ' .. action.title .. ': ' .. (err and err_text(err) or 'no resolved action'), levels.ERROR)
          if on_done then on_done(err) end
          return
        end
        resolved._hiera_resolved = true
        M.execute_action(client, resolved, bufnr, on_done)
      end, bufnr)
      return
    end
  end
  if action.edit then vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding) end
  local command = command_of(action)
  if command and command.command then
    run_command(client, command, bufnr, on_done)
  elseif on_done then
    on_done(nil, nil)
  end
end

local function is_hiera_action(action)
  local command = command_of(action)
  return command ~= nil and type(command.command) == 'string' and command.command:find('^hiera%.') ~= nil
end

local function pick(actions, prompt, on_choice)
  vim.ui.select(actions, {
    prompt = prompt,
    format_item = function(action) return action.title end,
  }, function(choice)
    if choice then on_choice(choice) end
  end)
end

-- :HieraOptimize / :HieraProfile: the code action whose title matches the
-- configured pattern for `kind`; several: a choice among them; none: a
-- choice among the hiera.* actions offered here.
function M.run_action(kind, opts)
  opts = opts or {}
  local bufnr = vim.api.nvim_get_current_buf()
  local client = first_client(bufnr)
  if not client then return end
  local pattern = (config.options.actions or {})[kind] or M.patterns[kind] or ('^' .. kind)
  local params = vim.lsp.util.make_range_params(0, client.offset_encoding)
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  params.context = { diagnostics = line_diagnostics(bufnr, client, row) }
  util.request(client, 'textDocument/codeAction', params, function(err, actions)
    if err then
      util.notify('hiera: code actions: ' .. err_text(err), levels.ERROR)
      return
    end
    actions = type(actions) == 'table' and actions or {}
    local matching = vim.tbl_filter(function(a)
      return type(a.title) == 'string' and a.title:find(pattern) ~= nil
    end, actions)
    local run = function(action) M.execute_action(client, action, bufnr, opts.on_done) end
    if #matching == 1 then return run(matching[1]) end
    if #matching > 1 then return pick(matching, 'hiera: ' .. kind, run) end
    local offered = vim.tbl_filter(is_hiera_action, actions)
    if #offered == 0 then
      util.notify(string.format('hiera: no %s action here', kind), levels.WARN)
      return
    end
    pick(offered, string.format('hiera: no action matches %q; run', pattern), run)
  end, bufnr)
end

-- Built-in title patterns of actions that are not configurable.
M.patterns = { spec = '^Show task spec' }

function M.optimize(opts) return M.run_action('optimize', opts) end
function M.profile(opts) return M.run_action('profile', opts) end

-- A scratch buffer named `name` holding `lines`, shown in a split (reused when open).
local function show_scratch(name, lines, filetype)
  local bufnr = -1
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_valid(b) and vim.api.nvim_buf_get_name(b) == name then bufnr = b end
  end
  if bufnr == -1 then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, name)
    vim.bo[bufnr].bufhidden = 'wipe'
  end
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].modified = false
  if filetype then vim.bo[bufnr].filetype = filetype end
  local win = vim.fn.bufwinid(bufnr)
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, bufnr)
  end
  return bufnr
end

-- A file in a split below (the window that shows it already, if any).
local function show_file(path)
  local win = vim.fn.bufwinid(vim.fn.bufnr(path))
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd('botright split ' .. vim.fn.fnameescape(path))
  end
  return vim.api.nvim_get_current_buf()
end

-- :HieraSpec: the "Show task spec" action at the cursor. The server answers
-- {markdown, path}: the file it wrote opens (Neovim before 0.10 does not take
-- window/showDocument, so the plugin opens it); no file: the Markdown in a
-- scratch buffer.
function M.spec(opts)
  opts = opts or {}
  return M.run_action('spec', { on_done = function(err, result)
    if not err and type(result) == 'table' and type(result.markdown) == 'string' then
      if type(result.path) == 'string' and util.exists(result.path) then
        show_file(result.path)
      else
        show_scratch('hiera://spec', vim.split(result.markdown, '\n', { plain = true }), 'markdown')
      end
    end
    if opts.on_done then opts.on_done(err, result) end
  end })
end

-- Sends one command to each client and calls done(answers) once all have
-- answered; answers: list of {client, err, result}.
local function each_client(clients, command, arguments, done)
  local answers, pending = {}, #clients
  if pending == 0 then return done(answers) end
  for _, client in ipairs(clients) do
    util.request(client, 'workspace/executeCommand', { command = command, arguments = arguments }, function(err, result)
      table.insert(answers, { client = client, err = err, result = result })
      pending = pending - 1
      if pending == 0 then done(answers) end
    end)
  end
end

local function servers()
  local clients = util.clients(nil)
  if #clients == 0 then util.notify('hiera: no hiera language server is running', levels.WARN) end
  return clients
end

-- :HieraCancel [job id]: hiera.cancelJob; no id: every running job.
function M.cancel(id, on_done)
  if id == '' then id = nil end
  local clients = servers()
  if #clients == 0 then return end
  if id then
    local job = progress.find(id)
    local owner = job and vim.lsp.get_client_by_id(job.client_id)
    if owner and owner.name == util.name then clients = { owner } end
  end
  each_client(clients, 'hiera.cancelJob', id and { id } or {}, function(answers)
    local count, errors = 0, {}
    for _, a in ipairs(answers) do
      if a.err then
        table.insert(errors, err_text(a.err))
      elseif type(a.result) == 'table' and type(a.result.cancelled) == 'number' then
        count = count + a.result.cancelled
      end
    end
    if id and count == 0 and #errors > 0 then
      util.notify('hiera: ' .. errors[1], levels.ERROR)
    else
      util.notify(string.format('hiera: cancelled %d job%s', count, count == 1 and '' or 's'))
    end
    if on_done then on_done(count, errors) end
  end)
end

-- The lines of a job table: id, title, state, message.
function M.format_jobs(jobs)
  if #jobs == 0 then return { 'hiera: no jobs' } end
  local rows = { { 'id', 'title', 'state', 'message' } }
  for _, job in ipairs(jobs) do
    local message = job.message or ''
    if job.state == 'running' and type(job.percentage) == 'number' then
      message = string.format('%s (%d%%)', message, math.floor(job.percentage))
    end
    table.insert(rows, { tostring(job.id or ''), tostring(job.title or ''), tostring(job.state or ''), message })
  end
  local widths = { 0, 0, 0 }
  for _, row in ipairs(rows) do
    for i = 1, 3 do widths[i] = math.max(widths[i], vim.fn.strdisplaywidth(row[i])) end
  end
  local lines = { 'hiera jobs:' }
  for _, row in ipairs(rows) do
    local cells = {}
    for i = 1, 3 do
      cells[i] = row[i] .. string.rep(' ', widths[i] - vim.fn.strdisplaywidth(row[i]))
    end
    cells[4] = row[4]
    table.insert(lines, (table.concat(cells, '  '):gsub('%s+$', '')))
  end
  return lines
end

-- :HieraStatus: hiera.jobs of every hiera server, as a table.
function M.status(on_done)
  local clients = servers()
  if #clients == 0 then return end
  each_client(clients, 'hiera.jobs', {}, function(answers)
    local jobs = {}
    for _, a in ipairs(answers) do
      if a.err then
        util.notify('hiera: hiera.jobs: ' .. err_text(a.err), levels.ERROR)
      elseif type(a.result) == 'table' then
        vim.list_extend(jobs, a.result)
      end
    end
    util.notify(table.concat(M.format_jobs(jobs), '\n'))
    if on_done then on_done(jobs) end
  end)
end

-- The report file hiera.jobs names for `job` (asked of the job's server,
-- waiting at most 2 s); nil when it wrote none or the server is gone.
local function report_path(job)
  local client = vim.lsp.get_client_by_id(job.client_id)
  if not client or client.name ~= util.name or util.is_stopped(client) then return nil end
  local answer = util.request_sync(client, 'workspace/executeCommand', { command = 'hiera.jobs', arguments = {} }, 2000)
  if not answer or answer.err or type(answer.result) ~= 'table' then return nil end
  for _, entry in ipairs(answer.result) do
    if entry.id == job.token and type(entry.reportPath) == 'string' and entry.reportPath ~= '' then
      return entry.reportPath
    end
  end
  return nil
end

-- :HieraReport [job id]: the report file the job (the last job without an
-- id) wrote, as hiera.jobs names it; a job that wrote none: its progress and
-- end message in a scratch buffer.
function M.report(id)
  local job = progress.find(id)
  if not job then
    util.notify(id and id ~= '' and ('hiera: no report for ' .. id) or 'hiera: no job has reported yet', levels.WARN)
    return nil
  end
  local path = job.done and report_path(job)
  if path and util.exists(path) then return show_file(path) end
  if path then util.notify('hiera: the report ' .. path .. ' is gone; showing the progress', levels.WARN) end
  return show_scratch('hiera://report/' .. job.token, progress.report_lines(job))
end

local function complete_from(list)
  return function(lead)
    return vim.tbl_filter(function(token) return token:find(lead, 1, true) == 1 end, list())
  end
end

-- Defines the user commands (again: harmless).
function M.register()
  local create = vim.api.nvim_create_user_command
  create('HieraOptimize', function() M.optimize() end,
    { nargs = 0, desc = 'hiera: run the Optimize code action at the cursor' })
  create('HieraProfile', function() M.profile() end,
    { nargs = 0, desc = 'hiera: run the Profile code action at the cursor' })
  create('HieraSpec', function() M.spec() end,
    { nargs = 0, desc = 'hiera: show the task spec of the kernel or module at the cursor' })
  create('HieraCancel', function(o) M.cancel(o.args) end,
    { nargs = '?', complete = complete_from(progress.running), desc = 'hiera: cancel a job (no id: all jobs)' })
  create('HieraStatus', function() M.status() end, { nargs = 0, desc = 'hiera: list the jobs' })
  create('HieraReport', function(o) M.report(o.args) end,
    { nargs = '?', complete = complete_from(progress.all_tokens), desc = "hiera: show the last job's report" })
end

return M
