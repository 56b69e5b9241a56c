#!/usr/bin/env bash
# Runs the hiera_runner unit tests (Python unittest) with a python3 that
# imports torch (scripts/find-torch-python); exits 77 (ctest's skip code)
# when there is none. Usage: tests/unit/engine/worker/python/run_tests.sh [-v]
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../../.." && pwd)"
if ! py="$("$root/scripts/find-torch-python")"; then
  echo "SKIP: no python3 that imports torch (set HIERA_PYTHON, or apt-get install python3-torch)"
  exit 77
fi
export PYTHONPATH="$root/engine/worker/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
cd "$here" || exit 1
exec "$py" -m unittest discover -s "$here" -t "$here" -p 'test_*.py' "$@"
