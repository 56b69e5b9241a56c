-- :checkhealth hiera: what the plugin needs around it. The server binary
-- (config cmd[1]) and its --version; python3 with torch (the GPU worker's
-- PyTorch targets); a visible GPU (nvidia-smi); the knowledge directory the
-- server reads. Works with Neovim 0.7's health API (require('health').report_*)
-- and 0.10's (vim.health.start/ok/warn/error/info).
local M = {}

local function reporter()
  local h = vim.health
  if h and h.start then
    return { start = h.start, ok = h.ok, warn = h.warn, error = h.error, info = h.info }
  end
  h = (h and h.report_start) and h or require('health')
  return { start = h.report_start, ok = h.report_ok, warn = h.report_warn, error = h.report_error, info = h.report_info }
end

-- First line of a command's output, and whether it exited 0.
local function run(argv)
  local ok, output = pcall(vim.fn.system, argv)
  if not ok then return false, tostring(output) end
  local first = (output or ''):gsub('\r', ''):match('^[^\n]*') or ''
  return vim.v.shell_error == 0, vim.trim(first), output
end

local function is_dir(path)
  local stat = (vim.uv or vim.loop).fs_stat(path)
  return stat ~= nil and stat.type == 'directory'
end

-- Where `hiera lsp` looks (engine/knowledge/knowledge_dir.h): $HIERA_KNOWLEDGE_DIR,
-- else <bin>/../share/hiera/knowledge; else the source tree it was built from.
local function knowledge_dir(server)
  local env = os.getenv('HIERA_KNOWLEDGE_DIR')
  if env and env ~= '' then return env, '$HIERA_KNOWLEDGE_DIR' end
  local real = (vim.uv or vim.loop).fs_realpath(server) or server
  local installed = vim.fn.fnamemodify(real, ':h:h') .. '/share/hiera/knowledge'
  if is_dir(installed) then return installed, 'installed beside the server' end
  return nil, nil
end

function M.check()
  local r = reporter()
  local options = require('hiera.config').options
  local cmd = options.cmd or {}
  r.start('hiera: language server')
  local server = cmd[1] and vim.fn.exepath(cmd[1]) or ''
  if server == '' then
    r.error(string.format("server binary '%s' not found or not executable", tostring(cmd[1])),
      { "build it (scripts/run) and set require('hiera').setup{ cmd = { '/path/to/hiera', 'lsp' } }" })
  else
    local ok, version = run({ server, '--version' })
    if ok and version:match('^hiera ') then
      r.ok(string.format('server binary: %s (%s)', server, version))
    else
      r.error(string.format('server binary: %s does not answer --version as hiera does: %s', server, version))
    end
  end

  r.start('hiera: GPU worker')
  if vim.fn.executable('python3') ~= 1 then
    r.warn('python3 not found: PyTorch targets cannot be measured here', { 'install Python 3 with torch, or set settings.worker.command to a worker on another host' })
  else
    local ok, version = run({ 'python3', '-c', 'import torch; print(torch.__version__)' })
    if ok then
      r.ok('python3 with torch ' .. version)
    else
      r.warn('python3 has no torch: PyTorch targets cannot be measured here', { 'pip install torch, or set settings.worker.command to a worker on another host' })
    end
  end
  if vim.fn.executable('nvidia-smi') ~= 1 then
    r.warn('nvidia-smi not found: no visible GPU; estimates only, optimize and profile jobs need a worker on a GPU host',
      { 'set settings.worker.command (e.g. { "ssh", "gpu-box", "hiera", "worker" })' })
  else
    local ok, first = run({ 'nvidia-smi', '-L' })
    if ok and first:match('^GPU') then
      r.ok('GPU: ' .. first)
    else
      r.warn('nvidia-smi sees no GPU: ' .. first)
    end
  end

  r.start('hiera: knowledge')
  if server == '' then
    r.info('knowledge directory: unknown without the server binary')
  else
    local dir, from = knowledge_dir(server)
    if dir and is_dir(dir .. '/gpus') then
      r.ok(string.format('knowledge directory: %s (%s)', dir, from))
    elseif dir then
      r.error(string.format('knowledge directory %s (%s) has no gpus/', dir, from))
    else
      r.info('knowledge directory: the source tree the server was built from (no $HIERA_KNOWLEDGE_DIR, not installed)')
    end
  end
end

return M
