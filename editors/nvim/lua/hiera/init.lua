-- hiera for Neovim: require('hiera').setup{...}
--
-- Neovim 0.11+: setup configures and enables the `hiera` config of
-- lsp/hiera.lua through vim.lsp.config / vim.lsp.enable.
-- Neovim 0.7-0.10: setup starts one client per project root with
-- vim.lsp.start_client when a buffer of a configured filetype opens, and
-- attaches every such buffer of that root to it.
--
-- Options (all optional; see config.lua for the defaults):
--   cmd, filetypes, root_markers, settings, notify_progress,
--   actions = { optimize = <Lua pattern>, profile = <Lua pattern> },
--   keymaps = { hover = 'K' }, codelens = true,
--   on_attach, on_init, on_exit, capabilities, handlers.
-- :checkhealth hiera checks the server binary, python with torch, a GPU and
-- the knowledge directory (lua/hiera/health.lua).
local commands = require('hiera.commands')
local config = require('hiera.config')
local progress = require('hiera.progress')
local util = require('hiera.util')

local M = {}

-- root_dir -> client id (0.7-0.10 path).
local started = {}
local missing_reported = false

-- A JSON object even when empty (an empty Lua table is sent as []).
local function object(t)
  if type(t) ~= 'table' or next(t) == nil then return vim.empty_dict() end
  return t
end

-- window/showMessage through vim.notify (Neovim 0.7 only echoes it), so a
-- setting the server refuses is a warning the user sees.
local levels = { vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG }
function M.show_message(_, result, _, _)
  if type(result) == 'table' and type(result.message) == 'string' then
    util.notify(result.message, levels[result.type] or vim.log.levels.INFO)
  end
  return vim.NIL
end

local function handlers(opts)
  local list = vim.tbl_extend('force', {}, opts.handlers or {})
  list['$/progress'] = progress.make_handler(opts.handlers and opts.handlers['$/progress'])
  if not list['window/showMessage'] then list['window/showMessage'] = M.show_message end
  return list
end

local function refresh_lenses(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) then return end
  if vim.fn.has('nvim-0.10') == 1 then
    pcall(vim.lsp.codelens.refresh, { bufnr = bufnr })
  elseif bufnr == vim.api.nvim_get_current_buf() then
    pcall(vim.lsp.codelens.refresh) -- 0.7-0.9: the current buffer's
  end
end

-- What the plugin does on attach, before the user's on_attach (which may
-- map the same keys again): K -> hover, the code lenses kept fresh.
function M.default_on_attach(client, bufnr, opts)
  opts = opts or config.options
  local keymaps = opts.keymaps
  if type(keymaps) == 'table' and keymaps.hover then
    -- Looked up when pressed, so a wrapper installed later (a UI plugin) is the one called.
    vim.keymap.set('n', keymaps.hover, function() vim.lsp.buf.hover() end,
      { buffer = bufnr, desc = 'hiera: hover (vim.lsp.buf.hover)' })
  end
  local caps = client and client.server_capabilities or {}
  if opts.codelens and caps.codeLensProvider then
    local group = vim.api.nvim_create_augroup('hiera_codelens_' .. bufnr, { clear = true })
    vim.api.nvim_create_autocmd({ 'BufEnter', 'CursorHold', 'InsertLeave' }, {
      group = group,
      buffer = bufnr,
      callback = function() refresh_lenses(bufnr) end,
      desc = 'hiera: refresh code lenses',
    })
    refresh_lenses(bufnr)
  end
end

local function on_attach(opts)
  return function(client, bufnr)
    M.default_on_attach(client, bufnr, opts)
    if opts.on_attach then return opts.on_attach(client, bufnr) end
  end
end

-- The client configuration, minus what each path adds (root_dir / root_markers).
local function client_config(opts)
  local settings = opts.settings or {}
  return {
    name = util.name,
    cmd = opts.cmd,
    init_options = object(vim.deepcopy(settings)),
    settings = { hiera = object(vim.deepcopy(settings)) },
    handlers = handlers(opts),
    capabilities = opts.capabilities,
    on_attach = on_attach(opts),
    on_init = opts.on_init,
    on_exit = opts.on_exit,
  }
end

local function attachable(bufnr)
  return vim.api.nvim_buf_is_valid(bufnr) and vim.bo[bufnr].buftype == ''
    and vim.api.nvim_buf_get_name(bufnr) ~= ''
end

-- 0.7-0.10: the client of the buffer's root, started on first use.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not attachable(bufnr) then return nil end
  local opts = config.options
  if vim.fn.executable(opts.cmd[1]) ~= 1 then
    if not missing_reported then
      missing_reported = true
      util.notify(string.format("hiera: '%s' is not executable; set require('hiera').setup{ cmd = { '/path/to/hiera', 'lsp' } }",
        opts.cmd[1]), vim.log.levels.ERROR)
    end
    return nil
  end
  local root = util.root_dir(bufnr, opts.root_markers)
  local id = started[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if not client or util.is_stopped(client) then
    local cfg = client_config(opts)
    cfg.root_dir = root
    local on_exit = cfg.on_exit
    cfg.on_exit = function(code, signal, client_id)
      if started[root] == client_id then started[root] = nil end
      if on_exit then return on_exit(code, signal, client_id) end
    end
    id = vim.lsp.start_client(cfg)
    if not id then return nil end
    started[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

local augroup

function M.setup(opts)
  opts = config.set(opts)
  commands.register()
  if util.has_lsp_config() then
    -- lsp/hiera.lua holds the defaults; these are the user's values on top.
    local cfg = client_config(opts)
    cfg.name = nil
    cfg.filetypes = opts.filetypes
    cfg.root_markers = opts.root_markers
    vim.lsp.config(util.name, cfg)
    vim.lsp.enable(util.name)
    return M
  end
  augroup = vim.api.nvim_create_augroup('hiera', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = augroup,
    pattern = opts.filetypes,
    callback = function(args) M.attach(args.buf) end,
    desc = 'hiera: start or attach the language server',
  })
  -- Buffers already open when setup runs.
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr)
      and vim.tbl_contains(opts.filetypes, vim.bo[bufnr].filetype) then
      M.attach(bufnr)
    end
  end
  return M
end

M.optimize = commands.optimize
M.profile = commands.profile
M.spec = commands.spec
M.cancel = commands.cancel
M.status = commands.status
M.report = commands.report

return M
