#!/bin/bash
# build.sh: Release build of hiera + worker with CUDA and torch into build/gpu.
python=$(scripts/find-torch-python)
prefix=$($python -c 'import torch; print(torch.utils.cmake_prefix_path)')
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DHIERA_CUDA=ON -DHIERA_TORCH=AUTO -DCMAKE_PREFIX_PATH="$prefix" \
  -DHIERA_BUILD_TESTS=OFF -DHIERA_BUILD_BENCHMARKS=OFF > /tmp/configure.log 2>&1 || { tail -30 /tmp/configure.log; exit 1; }
cmake --build build/gpu -j 16 --target hiera hiera-worker > /tmp/build.log 2>&1 || { grep -E "error|FAILED" /tmp/build.log | head -30; exit 1; }
echo built
