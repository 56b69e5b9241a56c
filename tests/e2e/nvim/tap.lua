-- The check helpers the Neovim e2e scripts share: one "ok N - what" line per
-- check on stdout, and an error {what, why} on the first failure, which
-- tap.main turns into "not ok …" and exit code 1.
local tap = { WAIT_MS = 10000, checks = 0 }

function tap.out(line)
  io.stdout:write(line .. '\n')
  io.stdout:flush()
end

function tap.fail(what, why)
  error({ what = what, why = why }, 0)
end

function tap.check(what, ok, why)
  tap.checks = tap.checks + 1
  if not ok then tap.fail(string.format('%d - %s', tap.checks, what), why or 'check failed') end
  tap.out(string.format('ok %d - %s', tap.checks, what))
end

function tap.check_eq(what, actual, expected)
  tap.check(what, vim.deep_equal(actual, expected),
    string.format('expected %s, got %s', vim.inspect(expected), vim.inspect(actual)))
end

function tap.wait_for(what, condition, timeout)
  if not vim.wait(timeout or tap.WAIT_MS, condition, 10) then tap.fail(what, 'timed out') end
end

-- Runs `run` under a hard deadline (nothing may hang, even a wait that
-- misbehaves), then cleanup(ok), then ends Neovim: the summary line and exit
-- code 0 when every check passed, "not ok …" and exit code 1 otherwise.
function tap.main(name, seconds, run, cleanup)
  vim.defer_fn(function()
    tap.out(string.format('not ok - the whole run took longer than %d s', seconds))
    os.exit(1)
  end, seconds * 1000)
  local ok, err = xpcall(run, function(e)
    if type(e) == 'table' then return e end
    return { what = 'lua error', why = debug.traceback(tostring(e), 2) }
  end)
  if cleanup then cleanup(ok) end
  if ok then
    tap.out(string.format('# %s: %d checks passed', name, tap.checks))
    vim.cmd('qall!')
  else
    tap.out(string.format('not ok %s: %s', err.what, err.why))
    os.exit(1)
  end
end

return tap
