#!/bin/bash
# build_release.sh [BUILD_DIR]: Release build of `hiera` and `hiera-worker` with CUDA and torch
# (default BUILD_DIR: build/gpu), for the GPU measurements of bench/gpu/bench_suite.sh.
# Run from anywhere; it builds the checkout this script lies in.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/gpu}
cd "$root" || exit 1
python=$(scripts/find-torch-python)
prefix=$($python -c 'import torch; print(torch.utils.cmake_prefix_path)')
export PATH=/usr/local/cuda/bin:$PATH
log=$(mktemp -d)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHIERA_CUDA=ON -DHIERA_TORCH=AUTO \
  -DCMAKE_PREFIX_PATH="$prefix" -DHIERA_BUILD_TESTS=OFF -DHIERA_BUILD_BENCHMARKS=OFF \
  > "$log/configure.log" 2>&1 || { tail -30 "$log/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target hiera hiera-worker > "$log/build.log" 2>&1 \
  || { grep -E "error|FAILED" "$log/build.log" | head -30; exit 1; }
echo "built $build"
