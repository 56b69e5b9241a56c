#!/usr/bin/env bash
# The generalisation suite on CPU torch: every problem imports, builds on the meta device at
# its full size, and its forward composes (tests/generalisation/check_suite.py). Exits 77
# (ctest's skip code) without a python3 that imports torch.
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if ! py="$("$root/scripts/find-torch-python")"; then
  echo "SKIP: no python3 that imports torch (set HIERA_PYTHON, or apt-get install python3-torch)"
  exit 77
fi
export PYTHONDONTWRITEBYTECODE=1
exec "$py" "$root/tests/generalisation/check_suite.py" "$@"
