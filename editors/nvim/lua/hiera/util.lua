-- What differs between Neovim 0.7 and 0.11+, in one place.
local M = {}

M.name = 'hiera'

local has_011 = vim.fn.has('nvim-0.11') == 1

function M.has_lsp_config()
  return has_011 and type(vim.lsp.config) ~= 'nil' and type(vim.lsp.enable) == 'function'
end

-- The hiera clients: those attached to bufnr, or all of them (bufnr nil).
function M.clients(bufnr)
  local list = {}
  if vim.lsp.get_clients then -- 0.10+
    list = vim.lsp.get_clients({ bufnr = bufnr, name = M.name })
  elseif bufnr then -- 0.7-0.9
    for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do table.insert(list, client) end
  else
    list = vim.lsp.get_active_clients()
  end
  return vim.tbl_filter(function(c) return c.name == M.name end, list)
end

local function is_stopped(client)
  if has_011 then return client:is_stopped() end
  return client.is_stopped()
end
M.is_stopped = is_stopped

-- client.request / client:request (0.11 made them methods).
function M.request(client, method, params, handler, bufnr)
  if has_011 then return client:request(method, params, handler, bufnr) end
  return client.request(method, params, handler, bufnr)
end

-- client.request_sync / client:request_sync: {err, result} or nil on timeout.
function M.request_sync(client, method, params, timeout_ms, bufnr)
  if has_011 then return client:request_sync(method, params, timeout_ms, bufnr) end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

function M.stop(client, force)
  if has_011 then return client:stop(force) end
  return client.stop(force)
end

function M.notify(message, level)
  -- Looked up at call time: a notifier installed later (nvim-notify, a test) gets it.
  vim.notify(message, level or vim.log.levels.INFO, { title = 'hiera' })
end

function M.exists(path)
  return (vim.uv or vim.loop).fs_stat(path) ~= nil
end

local function parent(dir)
  local up = vim.fn.fnamemodify(dir, ':h')
  if up == dir then return nil end
  return up
end

-- The project root of a buffer: for each marker in order, the nearest
-- directory above the file that holds it; else the file's directory.
function M.root_dir(bufnr, markers)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local start = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.fn.getcwd()
  for _, marker in ipairs(markers or {}) do
    local dir = start
    while dir do
      if M.exists(dir .. '/' .. marker) then return dir end
      dir = parent(dir)
    end
  end
  return start
end

return M
