-- The check helpers both Neovim e2e scripts share: one "ok N - what" line per
-- check on stdout, and an error {what, why} on the first failure, which the
-- script turns into "not ok …" and exit code 1.
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

return tap
