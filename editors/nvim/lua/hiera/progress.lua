-- $/progress for hiera's jobs.
--
-- The handler is installed per client (client config `handlers`) and passes
-- every notification on to the handler that would otherwise have run (the
-- one in setup{handlers}, else vim.lsp.handlers['$/progress'], looked up at
-- call time), so Neovim's own progress state, the LspProgress /
-- LspProgressUpdate autocommands, fidget.nvim and statuslines keep working.
-- On top of that it keeps each token's messages, for :HieraReport, and with
-- notify_progress it tells vim.notify about each begin and end.
local config = require('hiera.config')
local util = require('hiera.util')

local M = {}

local MAX_JOBS = 50

-- key -> job; key is "<client id>:<token>". order: keys, oldest first.
M.jobs = {}
M.order = {}
-- The key of the job whose progress ended last, and of the one begun last.
M.last_ended = nil
M.last_begun = nil

local function key_of(client_id, token)
  return tostring(client_id) .. ':' .. tostring(token)
end

local function job_for(client_id, token)
  local key = key_of(client_id, token)
  local job = M.jobs[key]
  if not job then
    job = { key = key, token = tostring(token), client_id = client_id, title = nil, entries = {}, done = false }
    M.jobs[key] = job
    table.insert(M.order, key)
    while #M.order > MAX_JOBS do
      local old = table.remove(M.order, 1)
      M.jobs[old] = nil
      if M.last_ended == old then M.last_ended = nil end
      if M.last_begun == old then M.last_begun = nil end
    end
  end
  return job
end

local function level_of(message)
  message = message or ''
  if message:find('^failed') then return vim.log.levels.ERROR end
  if message:find('^cancelled') or message:find('^not applied') or message:find('^conflict') then
    return vim.log.levels.WARN
  end
  -- A job refused before it started ("Model: not started: no GPU ..."): the server shows the same text
  -- as a warning, and the two must not disagree whichever arrives last.
  if message:find(': not started: ', 1, true) then return vim.log.levels.WARN end
  return vim.log.levels.INFO
end

local function notify_enabled()
  return config.options.notify_progress ~= false
end

-- Records one $/progress value; returns the job it belongs to.
function M.record(client_id, token, value)
  local job = job_for(client_id, token)
  local kind = value.kind or 'report'
  if kind == 'begin' then
    job.title = value.title or job.title
    job.done = false
    M.last_begun = job.key
  end
  if value.message ~= nil then job.message = value.message end
  if value.percentage ~= nil then job.percentage = value.percentage end
  table.insert(job.entries, { kind = kind, message = value.message, percentage = value.percentage })
  if kind == 'end' then
    job.done = true
    job.end_message = value.message or 'done'
    M.last_ended = job.key
  end
  local title = job.title or 'job ' .. job.token
  if notify_enabled() and (kind == 'begin' or kind == 'end') then
    local message = value.message or (kind == 'begin' and 'started' or 'done')
    util.notify(string.format('hiera: %s: %s', title, message),
      kind == 'end' and level_of(message) or vim.log.levels.INFO)
  end
  return job
end

-- The handler to put in a client's `handlers['$/progress']`.
-- `next_handler`: what to chain to instead of vim.lsp.handlers['$/progress'].
function M.make_handler(next_handler)
  return function(err, result, ctx, cfg)
    if not err and type(result) == 'table' and result.token ~= nil and type(result.value) == 'table' then
      local ok, msg = pcall(M.record, ctx and ctx.client_id or 0, result.token, result.value)
      if not ok then util.notify('hiera: progress: ' .. tostring(msg), vim.log.levels.DEBUG) end
    end
    local chained = next_handler or vim.lsp.handlers['$/progress']
    if chained and chained ~= M.handler then return chained(err, result, ctx, cfg) end
    return vim.NIL
  end
end

M.handler = M.make_handler(nil)

-- A job by its token (the job id for hiera), or the last one; nil if none.
function M.find(token)
  if token and token ~= '' then
    for i = #M.order, 1, -1 do
      local job = M.jobs[M.order[i]]
      if job.token == token then return job end
    end
    return nil
  end
  return M.jobs[M.last_ended or ''] or M.jobs[M.last_begun or '']
end

-- Tokens of the jobs whose progress has not ended (for completion).
function M.running()
  local tokens = {}
  for _, key in ipairs(M.order) do
    local job = M.jobs[key]
    if not job.done then table.insert(tokens, job.token) end
  end
  return tokens
end

function M.all_tokens()
  local tokens = {}
  for i = #M.order, 1, -1 do table.insert(tokens, M.jobs[M.order[i]].token) end
  return tokens
end

-- The lines :HieraReport shows for a job.
function M.report_lines(job)
  local state = job.done and 'finished' or 'running'
  local lines = {
    string.format('hiera job %s: %s', job.token, job.title or '(no title)'),
    'state: ' .. state,
  }
  if job.done then
    table.insert(lines, '')
    table.insert(lines, 'result:')
    for _, line in ipairs(vim.split(job.end_message or '', '\n', { plain = true })) do
      table.insert(lines, '  ' .. line)
    end
  end
  table.insert(lines, '')
  table.insert(lines, 'progress:')
  for _, e in ipairs(job.entries) do
    local line = string.format('  %-6s %s', e.kind, ((tostring(e.message or '')):gsub('\n', ' ')))
    if type(e.percentage) == 'number' then line = line .. string.format(' (%d%%)', math.floor(e.percentage)) end
    table.insert(lines, (line:gsub('%s+$', '')))
  end
  return lines
end

return M
