#!/bin/sh
# Runs a GPU test binary, or skips (exit 77) with the reason when this machine
# has no NVIDIA driver or no GPU.
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' && [ ! -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ] && [ ! -e /usr/local/nvidia/lib64/libcuda.so.1 ]; then
  echo "SKIP: no NVIDIA driver (libcuda.so.1) on this machine; GPU tests need a GPU (run scripts/gpu-check there)"
  exit 77
fi
exec "$@"
