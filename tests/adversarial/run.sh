#!/usr/bin/env bash
# Runs the adversarial suite through the real worker: run.sh HIERA_WORKER cpu|cuda.
# Exits 77 (ctest's skip) where no python3 imports torch; on cuda, records go to
# $HIERA_GPU_RESULTS_DIR/adversarial when scripts/gpu-check sets it.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if ! "$root/scripts/find-torch-python" >/dev/null; then
  echo "SKIP: no python3 that imports torch (set HIERA_PYTHON, or apt-get install python3-torch)"
  exit 77
fi
out=()
if [ "$2" = cuda ] && [ -n "${HIERA_GPU_RESULTS_DIR:-}" ]; then out=(--out "$HIERA_GPU_RESULTS_DIR/adversarial"); fi
exec python3 "$here/run_suite.py" --worker "$1" --device "$2" "${out[@]}"
