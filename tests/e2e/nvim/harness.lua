-- What the Neovim e2e scripts share: TAP output (one "ok N - what" line per
-- check; the first failure is an error {what, why} that h.main turns into
-- "not ok …" and exit code 1), waits that fail naming what they waited for,
-- requests with a timeout, and the client that a script starts or the
-- editors/nvim plugin starts for it.
--
--   local h = dofile(repo .. '/tests/e2e/nvim/harness.lua')
local h = { WAIT_MS = 10000, checks = 0 }

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
h.repo = vim.fn.fnamemodify(here .. '/../../..', ':p'):gsub('/$', '')
h.fixtures = vim.fn.fnamemodify(os.getenv('HIERA_E2E_FIXTURES') or (h.repo .. '/tests/e2e/fixtures'), ':p'):gsub('/$', '')
h.plugin_dir = h.repo .. '/editors/nvim'

-- TAP ---------------------------------------------------------------------------

function h.out(line)
  io.stdout:write(line .. '\n')
  io.stdout:flush()
end

function h.fail(what, why)
  error({ what = what, why = why }, 0)
end

function h.check(what, ok, why)
  h.checks = h.checks + 1
  if not ok then h.fail(string.format('%d - %s', h.checks, what), why or 'check failed') end
  h.out(string.format('ok %d - %s', h.checks, what))
end

function h.check_eq(what, actual, expected)
  h.check(what, vim.deep_equal(actual, expected),
    string.format('expected %s, got %s', vim.inspect(expected), vim.inspect(actual)))
end

-- Waits for condition(); on timeout fails with `what`, the time waited and,
-- when given, detail() (the state that would have ended the wait).
function h.wait_for(what, condition, timeout, detail)
  timeout = timeout or h.WAIT_MS
  if not vim.wait(timeout, condition, 10) then
    h.fail(what, string.format('timed out after %d ms', timeout) .. (detail and (': ' .. detail()) or ''))
  end
end

-- Editor and files --------------------------------------------------------------

-- Filetype detection on and no python provider: the python ftplugin asks
-- has('python3'), which probes for pynvim (seconds). With plugin, editors/nvim
-- goes on 'runtimepath'.
function h.setup_editor(opts)
  vim.g.loaded_python3_provider = 0
  vim.g.loaded_python_provider = 0
  vim.cmd('filetype on')
  if opts and opts.plugin then vim.cmd('set runtimepath+=' .. vim.fn.fnameescape(h.plugin_dir)) end
end

local scratches = {}

-- A fresh folder, deleted when h.main ends.
function h.scratch()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  table.insert(scratches, dir)
  return dir
end

function h.read(path)
  local file = assert(io.open(path, 'rb'))
  local text = file:read('*a')
  file:close()
  return text
end

function h.write(path, text)
  local file = assert(io.open(path, 'wb'))
  file:write(text)
  file:close()
end

function h.copy(from, to) h.write(to, h.read(from)) end

-- Opens path in the current window (hide: the buffer it leaves stays loaded).
function h.edit(path, opts)
  vim.cmd('silent ' .. ((opts and opts.hide) and 'hide ' or '') .. 'edit ' .. vim.fn.fnameescape(path))
  return vim.api.nvim_get_current_buf()
end

function h.lines(bufnr, from, to)
  return vim.api.nvim_buf_get_lines(bufnr, from or 0, to or -1, false)
end

function h.first_line(bufnr) return h.lines(bufnr, 0, 1)[1] end

function h.at(bufnr, row, col)
  vim.api.nvim_win_set_buf(0, bufnr)
  vim.api.nvim_win_set_cursor(0, { row, col })
end

-- What the editor says --------------------------------------------------------

-- What the editor tells the user is kept, not written among the "ok" lines:
-- print() (Neovim 0.7's applyEdit handler prints "Workspace edit <label>") in
-- h.printed, vim.notify as {msg, level} in h.notes.
h.printed = {}
_G.print = function(...)
  local parts = {}
  for i = 1, select('#', ...) do parts[i] = tostring((select(i, ...))) end
  table.insert(h.printed, table.concat(parts, ' '))
end
h.notes = {}
vim.notify = function(msg, level) table.insert(h.notes, { msg = msg, level = level }) end

function h.notes_text()
  return vim.inspect(vim.tbl_map(function(n) return n.msg end, h.notes))
end

-- The index of the first note at or after `from` that contains `text` (plain).
function h.note_index(text, from)
  for i = from or 1, #h.notes do
    if h.notes[i].msg:find(text, 1, true) then return i end
  end
  return nil
end

function h.wait_note(what, text, from)
  h.wait_for(what, function() return h.note_index(text, from) ~= nil end, nil, h.notes_text)
  return h.notes[h.note_index(text, from)]
end

-- The client ------------------------------------------------------------------

-- h.client_id: the client under test; h.exit_code: its server's exit code
-- once it exited (h.on_exit records it).
function h.on_exit(code) h.exit_code = code end

function h.client() return h.client_id and vim.lsp.get_client_by_id(h.client_id) end

-- Starts a client with vim.lsp.start_client and waits for initialize.
function h.start_client(config)
  config.on_exit = h.on_exit
  h.client_id = vim.lsp.start_client(config)
  h.check('start_client returns an id', h.client_id ~= nil)
  h.wait_for('initialize', function() return h.exit_code ~= nil or (h.client() ~= nil and h.client().initialized) end)
  if h.exit_code ~= nil then h.fail('initialize', 'the server exited with code ' .. h.exit_code) end
  return h.client()
end

-- The editors/nvim plugin's setup{} with opts, its server's exit recorded.
function h.setup_plugin(opts)
  opts.on_exit = h.on_exit
  return require('hiera').setup(opts)
end

-- The clients named hiera attached to bufnr (nil: all running).
function h.hiera_clients(bufnr)
  local all = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) -- 0.10+
    or (bufnr and vim.lsp.buf_get_clients(bufnr) or vim.lsp.get_active_clients())
  return vim.tbl_filter(function(c) return c.name == 'hiera' end, vim.tbl_values(all))
end

-- Waits for a hiera client on bufnr (Neovim 0.7 lists one once it has
-- initialized) and makes the first one the client under test.
function h.wait_attached(bufnr, detail)
  h.wait_for('hiera lsp to attach to ' .. vim.api.nvim_buf_get_name(bufnr),
    function() return h.exit_code ~= nil or #h.hiera_clients(bufnr) > 0 end, nil, detail)
  if h.exit_code ~= nil then
    h.fail('initialize', 'hiera lsp exited with code ' .. h.exit_code .. (detail and (': ' .. detail()) or ''))
  end
  h.client_id = h.hiera_clients(bufnr)[1].id
  return h.client()
end

-- One request to the client under test through vim.lsp.buf_request_sync;
-- fails, naming the method, on a timeout or an error reply.
function h.request(bufnr, method, params, timeout)
  timeout = timeout or h.WAIT_MS
  local responses, err = vim.lsp.buf_request_sync(bufnr, method, params, timeout)
  if not responses then h.fail(method, string.format('no answer within %d ms: %s', timeout, tostring(err))) end
  local response = responses[h.client_id]
  if not response then h.fail(method, 'no answer from the client ' .. tostring(h.client_id)) end
  if response.err then h.fail(method, 'error reply: ' .. vim.inspect(response.err)) end
  return response.result
end

-- textDocument/hover at (row, byte col) of bufnr; returns the result and the params sent.
function h.hover(bufnr, row, col)
  h.at(bufnr, row, col)
  local params = vim.lsp.util.make_position_params(0, h.client().offset_encoding)
  return h.request(bufnr, 'textDocument/hover', params), params
end

-- textDocument/codeAction at (row, byte col) of bufnr, no diagnostics in the context.
function h.code_actions(bufnr, row, col)
  h.at(bufnr, row, col)
  local params = vim.lsp.util.make_range_params(0, h.client().offset_encoding)
  params.context = { diagnostics = {} }
  return h.request(bufnr, 'textDocument/codeAction', params)
end

function h.titles(actions) return vim.tbl_map(function(a) return a.title end, actions) end

-- Waits until bufnr has `count` diagnostics.
function h.wait_diagnostics(bufnr, count, what)
  h.wait_for(what or ('diagnostics of ' .. vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t')),
    function() return #vim.diagnostic.get(bufnr) == count end, nil,
    function() return string.format('%d diagnostics, not %d: %s', #vim.diagnostic.get(bufnr), count,
      vim.inspect(vim.diagnostic.get(bufnr))) end)
end

-- Waits until the plugin's progress store (hiera.progress) has the job `id`
-- (done: and it ended); returns its record.
function h.wait_job(what, id, opts)
  opts = opts or {}
  local progress = require('hiera.progress')
  h.wait_for(what, function()
    local job = progress.find(id)
    return job ~= nil and (not opts.done or job.done)
  end, opts.timeout, function() return vim.inspect(progress.jobs) end)
  return progress.find(id)
end

-- Stops the client under test and waits for its server to exit; returns the exit code.
function h.stop()
  vim.lsp.stop_client(h.client_id)
  h.wait_for('the server to exit', function() return h.exit_code ~= nil end)
  return h.exit_code
end

-- Runs `run` under a hard deadline (nothing may hang, even a wait that
-- misbehaves), then cleanup(ok), a forced stop of a server still running and
-- the removal of h.scratch() folders, then ends Neovim: the summary line and
-- exit code 0 when every check passed, "not ok …" and exit code 1 otherwise.
function h.main(name, seconds, run, cleanup)
  vim.defer_fn(function()
    h.out(string.format('not ok - the whole run took longer than %d s', seconds))
    os.exit(1)
  end, seconds * 1000)
  local ok, err = xpcall(run, function(e)
    if type(e) == 'table' then return e end
    return { what = 'lua error', why = debug.traceback(tostring(e), 2) }
  end)
  if cleanup then cleanup(ok) end
  if h.exit_code == nil and h.client() then pcall(vim.lsp.stop_client, h.client_id, true) end
  for _, dir in ipairs(scratches) do vim.fn.delete(dir, 'rf') end
  if ok then
    h.out(string.format('# %s: %d checks passed', name, h.checks))
    vim.cmd('qall!')
  else
    h.out(string.format('not ok %s: %s', err.what, err.why))
    -- What the editor said may explain the failure.
    for _, line in ipairs(h.printed) do h.out('# printed: ' .. line) end
    for _, note in ipairs(h.notes) do h.out('# notified: ' .. note.msg:gsub('\n', '\n# ')) end
    os.exit(1)
  end
end

return h
