#!/usr/bin/env bash
# The sample suite on CPU torch: every problem builds, runs with its CPU_SIZES,
# is deterministic and finite (samples/check_samples.py). Exits 77 (ctest's
# skip code) without a python3 that imports torch.
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if ! py="$("$root/scripts/find-torch-python")"; then
  echo "SKIP: no python3 that imports torch (set HIERA_PYTHON, or apt-get install python3-torch)"
  exit 77
fi
export PYTHONDONTWRITEBYTECODE=1
exec "$py" "$root/samples/check_samples.py" "$@"
